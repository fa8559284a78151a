//! Element types (mrt_data_type) and typed views of caller slices.
use crate::error::{invalid, Result};

/// mrt_data_type: the element types of models and graphs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool = 0,
    U8 = 1,
    S8 = 2,
    U16 = 3,
    S16 = 4,
    S32 = 5,
    U32 = 6,
    S64 = 7,
    U64 = 8,
    F16 = 9,
    F32 = 10,
    F64 = 11,
}

const ALL_TYPES: [DataType; 12] = [
    DataType::Bool,
    DataType::U8,
    DataType::S8,
    DataType::U16,
    DataType::S16,
    DataType::S32,
    DataType::U32,
    DataType::S64,
    DataType::U64,
    DataType::F16,
    DataType::F32,
    DataType::F64,
];

impl DataType {
    /// The type of a raw mrt_data_type value; None outside the enum.
    pub fn from_raw(raw: i32) -> Option<DataType> {
        usize::try_from(raw).ok().and_then(|i| ALL_TYPES.get(i).copied())
    }

    pub fn raw(self) -> i32 {
        self as i32
    }

    /// Bytes of one element.
    pub fn size(self) -> usize {
        match self {
            DataType::Bool | DataType::U8 | DataType::S8 => 1,
            DataType::U16 | DataType::S16 | DataType::F16 => 2,
            DataType::S32 | DataType::U32 | DataType::F32 => 4,
            DataType::S64 | DataType::U64 | DataType::F64 => 8,
        }
    }
}

/// The name of a raw mrt_data_type for messages ("F32", or the number).
pub(crate) fn type_name(raw: i32) -> String {
    DataType::from_raw(raw).map(|t| format!("{t:?}")).unwrap_or_else(|| format!("mrt_data_type {raw}"))
}

/// An IEEE half-precision number as its bits (MRT_F16), with conversions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F16(pub u16);

impl F16 {
    /// Rounds to nearest even; overflow gives infinity.
    pub fn from_f32(value: f32) -> F16 {
        let bits = value.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exponent = ((bits >> 23) & 0xff) as i32;
        let mantissa = bits & 0x7f_ffff;
        if exponent == 0xff {
            // Infinity stays infinity; NaN keeps a quiet payload bit.
            return F16(sign | 0x7c00 | if mantissa != 0 { 0x200 } else { 0 });
        }
        let half_exponent = exponent - 127 + 15;
        if half_exponent >= 0x1f {
            return F16(sign | 0x7c00);
        }
        if half_exponent <= 0 {
            if half_exponent < -10 {
                return F16(sign);
            }
            // A subnormal half: the implicit bit joins the mantissa.
            let full = mantissa | 0x80_0000;
            let shift = (14 - half_exponent) as u32;
            let half = full >> shift;
            let rest = full & ((1 << shift) - 1);
            let halfway = 1 << (shift - 1);
            let round = rest > halfway || (rest == halfway && half & 1 == 1);
            return F16(sign | (half + round as u32) as u16);
        }
        let half = ((half_exponent as u32) << 10) | (mantissa >> 13);
        let rest = mantissa & 0x1fff;
        let round = rest > 0x1000 || (rest == 0x1000 && half & 1 == 1);
        // A carry out of the mantissa correctly bumps the exponent.
        F16(sign | (half + round as u32) as u16)
    }

    pub fn to_f32(self) -> f32 {
        let sign = ((self.0 & 0x8000) as u32) << 16;
        let exponent = ((self.0 >> 10) & 0x1f) as u32;
        let mantissa = (self.0 & 0x3ff) as u32;
        let bits = match exponent {
            0 if mantissa == 0 => sign,
            0 => {
                // Subnormal: normalize for f32.
                let mut e = 127 - 15 + 1;
                let mut m = mantissa;
                while m & 0x400 == 0 {
                    m <<= 1;
                    e -= 1;
                }
                sign | ((e as u32) << 23) | ((m & 0x3ff) << 13)
            }
            0x1f => sign | 0x7f80_0000 | (mantissa << 13),
            _ => sign | ((exponent + 127 - 15) << 23) | (mantissa << 13),
        };
        f32::from_bits(bits)
    }
}

/// An MRT_BOOL element: one byte, 0 or 1 (any non-zero byte reads as true).
/// A byte, not a Rust bool, because the device may write any byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Bool(pub u8);

impl Bool {
    pub fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for Bool {
    fn from(value: bool) -> Bool {
        Bool(value as u8)
    }
}

/// Element types whose bytes libmrt may read and write: plain numbers for
/// which every bit pattern is a valid value.
///
/// # Safety
/// Implement only for types with no padding and no invalid bit patterns,
/// whose size is DATA_TYPE's element size.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    const DATA_TYPE: DataType;
}

macro_rules! elements {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(unsafe impl Element for $t { const DATA_TYPE: DataType = DataType::$d; })*
    };
}

elements!(
    Bool => Bool, u8 => U8, i8 => S8, u16 => U16, i16 => S16, i32 => S32, u32 => U32,
    i64 => S64, u64 => U64, F16 => F16, f32 => F32, f64 => F64,
);

/// The bytes of a slice of elements.
pub(crate) fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

/// The bytes of a mutable slice of elements (Element: any bytes are valid).
pub(crate) fn as_bytes_mut<T: Element>(data: &mut [T]) -> &mut [u8] {
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut u8, std::mem::size_of_val(data)) }
}

/// `bytes` as a slice of T, if aligned and a whole number of elements.
pub(crate) fn cast_slice<'a, T: Element>(name: &str, bytes: &'a [u8]) -> Result<&'a [T]> {
    let size = std::mem::size_of::<T>();
    if bytes.len() % size != 0 || (bytes.as_ptr() as usize) % std::mem::align_of::<T>() != 0 {
        return Err(invalid(format!(
            "tensor '{name}' ({} bytes) is not an aligned array of {:?}",
            bytes.len(),
            T::DATA_TYPE
        )));
    }
    if bytes.is_empty() {
        return Ok(&[]);
    }
    Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const T, bytes.len() / size) })
}

/// A named input of one request, borrowed from the caller.
pub struct Input<'a> {
    pub(crate) name: &'a str,
    pub(crate) bytes: &'a [u8],
    pub(crate) data_type: DataType,
}

impl<'a> Input<'a> {
    pub fn new<T: Element>(name: &'a str, data: &'a [T]) -> Input<'a> {
        Input { name, bytes: as_bytes(data), data_type: T::DATA_TYPE }
    }
}

/// A named output of one request: the caller's slice the library writes.
pub struct Output<'a> {
    pub(crate) name: &'a str,
    pub(crate) bytes: &'a mut [u8],
    pub(crate) data_type: DataType,
}

impl<'a> Output<'a> {
    pub fn new<T: Element>(name: &'a str, data: &'a mut [T]) -> Output<'a> {
        Output { name, bytes: as_bytes_mut(data), data_type: T::DATA_TYPE }
    }
}

/// An output buffer a request owns until it is done (execute_async_into):
/// a `Vec` of any element type, given back by into_vec.
pub struct OutputBuffer {
    name: String,
    data_type: DataType,
    /// The Vec's bytes, inside `storage`.
    data: *mut u8,
    len_bytes: usize,
    storage: Box<dyn std::any::Any + Send + Sync>,
}

// The pointer only refers into `storage`, which is Send and Sync.
unsafe impl Send for OutputBuffer {}
unsafe impl Sync for OutputBuffer {}

impl OutputBuffer {
    pub fn new<T: Element>(name: &str, mut data: Vec<T>) -> OutputBuffer {
        let (pointer, len_bytes) = (data.as_mut_ptr() as *mut u8, std::mem::size_of_val(&data[..]));
        // Boxing the Vec moves its header, not the elements `data` points to.
        OutputBuffer {
            name: name.to_string(),
            data_type: T::DATA_TYPE,
            data: pointer,
            len_bytes,
            storage: Box::new(data),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    pub(crate) fn len_bytes(&self) -> usize {
        self.len_bytes
    }

    pub(crate) fn data_ptr(&self) -> *mut std::os::raw::c_void {
        self.data as *mut std::os::raw::c_void
    }

    /// The elements, if T is the buffer's type.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        self.storage.downcast_ref::<Vec<T>>().map(|v| &v[..])
    }

    /// The Vec back, if T is its type (otherwise the buffer itself).
    pub fn into_vec<T: Element>(self) -> std::result::Result<Vec<T>, OutputBuffer> {
        if self.storage.is::<Vec<T>>() {
            Ok(*self.storage.downcast::<Vec<T>>().expect("checked by is()"))
        } else {
            Err(self)
        }
    }
}

impl std::fmt::Debug for OutputBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OutputBuffer({}, {:?}, {} bytes)", self.name, self.data_type, self.len_bytes)
    }
}
