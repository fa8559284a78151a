//! Graph: the Poplar-style layer models are built with (docs/graph.md):
//! tensors mapped to tiles, compute sets of built-in codelets, host FIFOs,
//! remote buffers, control programs and PopLibs-like operations; compiled
//! into an Executable.
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use crate::callback::{closure_user_data, free_boxed, with_closure};
use crate::error::{check, string_from_c, Result};
use crate::executable::Executable;
use crate::ffi::{name_to_c, optional_c, ptr_or_null, slice, CStrings, SizedStruct};
use crate::sys;
use crate::tensor::{as_bytes, DataType, Element};

/// A system a graph is built for, with the cost model's rates (mrt_target).
/// Change fields of Target::new's result to make "what if" targets.
#[derive(Clone, Copy)]
pub struct Target {
    raw: sys::mrt_target,
}

// The name points to the library's static storage.
unsafe impl Send for Target {}
unsafe impl Sync for Target {}

impl Target {
    /// System "gc200", "bow", "c600" or "ipu-model-small" with num_ipus
    /// IPUs per replica.
    pub fn new(system: &str, num_ipus: u32) -> Result<Target> {
        let system = name_to_c(system)?;
        let mut raw: sys::mrt_target = unsafe { std::mem::zeroed() };
        check(unsafe {
            sys::mrt_target_init_sized(system.as_ptr(), num_ipus, &mut raw, std::mem::size_of::<sys::mrt_target>())
        })?;
        Ok(Target { raw })
    }

    pub(crate) fn from_raw(raw: sys::mrt_target) -> Target {
        Target { raw }
    }

    pub fn name(&self) -> String {
        unsafe { string_from_c(self.raw.name) }
    }

    /// The rates and sizes.
    pub fn raw(&self) -> &sys::mrt_target {
        &self.raw
    }

    /// The rates and sizes, to change for a "what if" target.
    ///
    /// # Safety
    /// `name` is read by the library: it must stay a valid C string for as
    /// long as the target is used (leave it as Target::new set it).
    pub unsafe fn raw_mut(&mut self) -> &mut sys::mrt_target {
        &mut self.raw
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Target({}, {} IPUs of {} tiles, version {})",
            self.name(),
            self.raw.num_ipus,
            self.raw.tiles_per_ipu,
            self.raw.ipu_version
        )
    }
}

macro_rules! graph_ids {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        $($(#[$doc])* #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name(pub u64);)*
    };
}

graph_ids!(
    /// A variable, constant or view (mrt_tensor).
    Tensor,
    ComputeSet,
    Vertex,
    /// A host FIFO (mrt_stream).
    Stream,
    RemoteBuffer,
    Function,
    Program,
);

/// What a tensor is (mrt_tensor_info), copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub data_type: Option<DataType>,
    pub shape: Vec<u64>,
    pub num_elements: u64,
    pub num_bytes: u64,
    pub is_contiguous: bool,
    pub is_constant: bool,
}

/// Flat elements [begin, end) of a tensor live on `tile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileInterval {
    pub begin: u64,
    pub end: u64,
    pub tile: u32,
}

/// Sync kinds (mrt_sync_type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncType {
    Internal = 0,
    External = 1,
    Global = 2,
}

/// Which operand of a matmul a variable is laid out for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatmulOperand {
    Lhs = 0,
    Rhs = 1,
}

/// Tiles an operation spreads over: [first, first + count); count 0: to
/// the last tile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tiles {
    pub first: u32,
    pub count: u32,
}

/// Direction of a codelet field (mrt_field_direction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldDirection {
    In,
    Out,
    InOut,
}

/// One built-in codelet: its fields and attributes (with defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct Codelet {
    pub name: String,
    pub description: String,
    pub fields: Vec<(String, FieldDirection)>,
    pub attributes: Vec<(String, Vec<f64>)>,
}

/// The built-in codelet library.
pub fn codelets() -> Result<Vec<Codelet>> {
    (0..unsafe { sys::mrt_codelet_count() })
        .map(|index| {
            let mut info = sys::mrt_codelet_info::sized();
            check(unsafe { sys::mrt_codelet_get_info(index, &mut info) })?;
            let fields = (0..info.num_fields)
                .map(|field| {
                    let (mut name, mut direction) = (ptr::null(), 0);
                    check(unsafe { sys::mrt_codelet_field(index, field, &mut name, &mut direction) })?;
                    let direction = match direction {
                        0 => FieldDirection::In,
                        1 => FieldDirection::Out,
                        _ => FieldDirection::InOut,
                    };
                    Ok((unsafe { string_from_c(name) }, direction))
                })
                .collect::<Result<Vec<_>>>()?;
            let attributes = (0..info.num_attributes)
                .map(|attribute| {
                    let (mut name, mut defaults, mut count) = (ptr::null(), ptr::null(), 0);
                    check(unsafe {
                        sys::mrt_codelet_attribute(index, attribute, &mut name, &mut defaults, &mut count)
                    })?;
                    Ok((unsafe { string_from_c(name) }, unsafe { slice(defaults, count) }.to_vec()))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Codelet {
                name: unsafe { string_from_c(info.name) },
                description: unsafe { string_from_c(info.description) },
                fields,
                attributes,
            })
        })
        .collect()
}

/// Compilation progress: (step, total steps), on the compiling thread.
pub type ProgressCallback = Box<dyn FnMut(i32, i32) + Send + 'static>;

/// A graph: what one replica holds and does. The library serializes calls
/// on a graph: Send and Sync, methods take &self.
pub struct Graph {
    raw: NonNull<sys::mrt_graph>,
}

// mrt_c.h: "Calls on one graph are serialized by the graph's lock: any
// thread may use it, concurrent calls are safe".
unsafe impl Send for Graph {}
unsafe impl Sync for Graph {}

/// A debug name for C: None is NULL ("" for the library).
fn debug_name(name: Option<&str>) -> Result<Option<std::ffi::CString>> {
    optional_c(name)
}

impl Graph {
    /// An empty graph for `target` (None: one GC200) and its replicas.
    pub fn new(target: Option<&Target>, replication_factor: u32) -> Result<Graph> {
        let target = target.map(|t| &t.raw as *const sys::mrt_target).unwrap_or(ptr::null());
        let mut out = ptr::null_mut();
        check(unsafe { sys::mrt_graph_create(target, replication_factor, &mut out) })?;
        Ok(Graph { raw: NonNull::new(out).expect("MRT_OK and a NULL graph") })
    }

    fn as_ptr(&self) -> *mut sys::mrt_graph {
        self.raw.as_ptr()
    }

    /// Runs a call that yields one id through its last parameter.
    fn id(&self, call: impl FnOnce(*mut u64) -> i32) -> Result<u64> {
        let mut out = 0u64;
        check(call(&mut out))?;
        Ok(out)
    }

    pub fn target(&self) -> Result<Target> {
        let mut raw = sys::mrt_target::sized();
        check(unsafe { sys::mrt_graph_get_target(self.as_ptr(), &mut raw) })?;
        Ok(Target::from_raw(raw))
    }

    pub fn replication_factor(&self) -> Result<u32> {
        let mut out = 0;
        check(unsafe { sys::mrt_graph_replication_factor(self.as_ptr(), &mut out) })?;
        Ok(out)
    }

    // ---- Tensors ----

    /// A variable (zero after an engine loads); map it before compiling.
    pub fn add_variable(&self, data_type: DataType, shape: &[u64], name: &str) -> Result<Tensor> {
        let name = name_to_c(name)?;
        self.id(|out| unsafe {
            sys::mrt_graph_add_variable(self.as_ptr(), data_type.raw(), shape.as_ptr(), shape.len(), name.as_ptr(), out)
        })
        .map(Tensor)
    }

    /// A constant holding `data` (whose element type is the tensor's).
    pub fn add_constant<T: Element>(&self, shape: &[u64], data: &[T], name: &str) -> Result<Tensor> {
        let name = name_to_c(name)?;
        let bytes = as_bytes(data);
        self.id(|out| unsafe {
            sys::mrt_graph_add_constant(
                self.as_ptr(),
                T::DATA_TYPE.raw(),
                shape.as_ptr(),
                shape.len(),
                bytes.as_ptr() as *const c_void,
                bytes.len() as u64,
                name.as_ptr(),
                out,
            )
        })
        .map(Tensor)
    }

    /// A constant with every element `value` (converted to the type).
    pub fn add_constant_filled(&self, data_type: DataType, shape: &[u64], value: f64, name: &str) -> Result<Tensor> {
        let name = name_to_c(name)?;
        self.id(|out| unsafe {
            sys::mrt_graph_add_constant_filled(
                self.as_ptr(),
                data_type.raw(),
                shape.as_ptr(),
                shape.len(),
                value,
                name.as_ptr(),
                out,
            )
        })
        .map(Tensor)
    }

    pub fn tensor_info(&self, tensor: Tensor) -> Result<TensorInfo> {
        let mut raw = sys::mrt_tensor_info::sized();
        check(unsafe { sys::mrt_graph_tensor_info(self.as_ptr(), tensor.0, &mut raw) })?;
        Ok(TensorInfo {
            data_type: DataType::from_raw(raw.data_type),
            shape: unsafe { slice(raw.shape, raw.rank) }.to_vec(),
            num_elements: raw.num_elements,
            num_bytes: raw.num_bytes,
            is_contiguous: raw.is_contiguous,
            is_constant: raw.is_constant,
        })
    }

    /// Elements [begin, end) along `dim`.
    pub fn slice(&self, tensor: Tensor, begin: u64, end: u64, dim: u32) -> Result<Tensor> {
        self.id(|out| unsafe { sys::mrt_graph_slice(self.as_ptr(), tensor.0, begin, end, dim, out) }).map(Tensor)
    }

    /// Element `index` of dimension 0, dropping that dimension.
    pub fn index(&self, tensor: Tensor, index: u64) -> Result<Tensor> {
        self.id(|out| unsafe { sys::mrt_graph_index(self.as_ptr(), tensor.0, index, out) }).map(Tensor)
    }

    pub fn reshape(&self, tensor: Tensor, shape: &[u64]) -> Result<Tensor> {
        self.id(|out| unsafe { sys::mrt_graph_reshape(self.as_ptr(), tensor.0, shape.as_ptr(), shape.len(), out) })
            .map(Tensor)
    }

    pub fn flatten(&self, tensor: Tensor) -> Result<Tensor> {
        self.id(|out| unsafe { sys::mrt_graph_flatten(self.as_ptr(), tensor.0, out) }).map(Tensor)
    }

    pub fn transpose(&self, tensor: Tensor) -> Result<Tensor> {
        self.id(|out| unsafe { sys::mrt_graph_transpose(self.as_ptr(), tensor.0, out) }).map(Tensor)
    }

    pub fn concat(&self, tensors: &[Tensor], dim: u32) -> Result<Tensor> {
        let ids: Vec<u64> = tensors.iter().map(|t| t.0).collect();
        self.id(|out| unsafe { sys::mrt_graph_concat(self.as_ptr(), ids.as_ptr(), ids.len(), dim, out) }).map(Tensor)
    }

    // ---- Tile mapping ----

    pub fn set_tile_mapping(&self, tensor: Tensor, tile: u32) -> Result<()> {
        check(unsafe { sys::mrt_graph_set_tile_mapping(self.as_ptr(), tensor.0, tile) })
    }

    /// Spreads the tensor over `tiles` in chunks of at least grain_size elements.
    pub fn map_linearly(&self, tensor: Tensor, grain_size: u64, tiles: Tiles) -> Result<()> {
        check(unsafe { sys::mrt_graph_map_linearly(self.as_ptr(), tensor.0, grain_size, tiles.first, tiles.count) })
    }

    pub fn tile_mapping(&self, tensor: Tensor) -> Result<Vec<TileInterval>> {
        let mut count = 0;
        check(unsafe { sys::mrt_graph_tile_mapping(self.as_ptr(), tensor.0, ptr::null_mut(), 0, &mut count) })?;
        let mut raw = vec![sys::mrt_tile_interval { begin: 0, end: 0, tile: 0 }; count];
        check(unsafe {
            sys::mrt_graph_tile_mapping(self.as_ptr(), tensor.0, raw.as_mut_ptr(), raw.len(), &mut count)
        })?;
        raw.truncate(count);
        Ok(raw.iter().map(|i| TileInterval { begin: i.begin, end: i.end, tile: i.tile }).collect())
    }

    // ---- Compute sets and vertices ----

    pub fn add_compute_set(&self, name: &str) -> Result<ComputeSet> {
        let name = name_to_c(name)?;
        self.id(|out| unsafe { sys::mrt_graph_add_compute_set(self.as_ptr(), name.as_ptr(), out) }).map(ComputeSet)
    }

    /// A vertex of built-in codelet `codelet` on `tile`.
    pub fn add_vertex(&self, compute_set: ComputeSet, codelet: &str, tile: u32) -> Result<Vertex> {
        let codelet = name_to_c(codelet)?;
        self.id(|out| unsafe { sys::mrt_graph_add_vertex(self.as_ptr(), compute_set.0, codelet.as_ptr(), tile, out) })
            .map(Vertex)
    }

    pub fn connect(&self, vertex: Vertex, field: &str, tensor: Tensor) -> Result<()> {
        let field = name_to_c(field)?;
        check(unsafe { sys::mrt_graph_connect(self.as_ptr(), vertex.0, field.as_ptr(), tensor.0) })
    }

    /// Sets a vertex attribute (empty `values`: its default).
    pub fn set_vertex_attribute(&self, vertex: Vertex, attribute: &str, values: &[f64]) -> Result<()> {
        let attribute = name_to_c(attribute)?;
        check(unsafe {
            sys::mrt_graph_set_vertex_attribute(
                self.as_ptr(),
                vertex.0,
                attribute.as_ptr(),
                values.as_ptr(),
                values.len(),
            )
        })
    }

    // ---- Host communication, remote buffers, functions ----

    pub fn add_host_to_device_fifo(&self, handle: &str, data_type: DataType, num_elements: u64) -> Result<Stream> {
        let handle = name_to_c(handle)?;
        self.id(|out| unsafe {
            sys::mrt_graph_add_host_to_device_fifo(self.as_ptr(), handle.as_ptr(), data_type.raw(), num_elements, out)
        })
        .map(Stream)
    }

    pub fn add_device_to_host_fifo(&self, handle: &str, data_type: DataType, num_elements: u64) -> Result<Stream> {
        let handle = name_to_c(handle)?;
        self.id(|out| unsafe {
            sys::mrt_graph_add_device_to_host_fifo(self.as_ptr(), handle.as_ptr(), data_type.raw(), num_elements, out)
        })
        .map(Stream)
    }

    /// A handle for Engine::write_tensor.
    pub fn create_host_write(&self, handle: &str, tensor: Tensor) -> Result<()> {
        let handle = name_to_c(handle)?;
        check(unsafe { sys::mrt_graph_create_host_write(self.as_ptr(), handle.as_ptr(), tensor.0) })
    }

    /// A handle for Engine::read_tensor.
    pub fn create_host_read(&self, handle: &str, tensor: Tensor) -> Result<()> {
        let handle = name_to_c(handle)?;
        check(unsafe { sys::mrt_graph_create_host_read(self.as_ptr(), handle.as_ptr(), tensor.0) })
    }

    pub fn add_remote_buffer(
        &self,
        handle: &str,
        data_type: DataType,
        num_elements: u64,
        repeats: u64,
    ) -> Result<RemoteBuffer> {
        let handle = name_to_c(handle)?;
        self.id(|out| unsafe {
            sys::mrt_graph_add_remote_buffer(
                self.as_ptr(),
                handle.as_ptr(),
                data_type.raw(),
                num_elements,
                repeats,
                out,
            )
        })
        .map(RemoteBuffer)
    }

    pub fn add_function(&self, body: Program) -> Result<Function> {
        self.id(|out| unsafe { sys::mrt_graph_add_function(self.as_ptr(), body.0, out) }).map(Function)
    }

    // ---- Programs ----

    pub fn sequence(&self, programs: &[Program], name: Option<&str>) -> Result<Program> {
        let ids: Vec<u64> = programs.iter().map(|p| p.0).collect();
        let name = debug_name(name)?;
        self.id(|out| unsafe {
            sys::mrt_program_sequence(self.as_ptr(), ids.as_ptr(), ids.len(), ptr_or_null(&name), out)
        })
        .map(Program)
    }

    pub fn sequence_add(&self, sequence: Program, program: Program) -> Result<()> {
        check(unsafe { sys::mrt_program_sequence_add(self.as_ptr(), sequence.0, program.0) })
    }

    pub fn execute(&self, compute_set: ComputeSet, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe { sys::mrt_program_execute(self.as_ptr(), compute_set.0, ptr_or_null(&name), out) })
            .map(Program)
    }

    pub fn copy(&self, source: Tensor, destination: Tensor, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe { sys::mrt_program_copy(self.as_ptr(), source.0, destination.0, ptr_or_null(&name), out) })
            .map(Program)
    }

    pub fn copy_from_stream(&self, stream: Stream, destination: Tensor, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe {
            sys::mrt_program_copy_from_stream(self.as_ptr(), stream.0, destination.0, ptr_or_null(&name), out)
        })
        .map(Program)
    }

    pub fn copy_to_stream(&self, source: Tensor, stream: Stream, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe {
            sys::mrt_program_copy_to_stream(self.as_ptr(), source.0, stream.0, ptr_or_null(&name), out)
        })
        .map(Program)
    }

    /// Reads slot `slot`, or the slot in scalar `slot_tensor` at run time.
    pub fn copy_from_remote_buffer(
        &self,
        buffer: RemoteBuffer,
        destination: Tensor,
        slot: u64,
        slot_tensor: Option<Tensor>,
        name: Option<&str>,
    ) -> Result<Program> {
        let name = debug_name(name)?;
        let slot_tensor = slot_tensor.map(|t| t.0).unwrap_or(0);
        self.id(|out| unsafe {
            sys::mrt_program_copy_from_remote_buffer(
                self.as_ptr(),
                buffer.0,
                destination.0,
                slot,
                slot_tensor,
                ptr_or_null(&name),
                out,
            )
        })
        .map(Program)
    }

    pub fn copy_to_remote_buffer(
        &self,
        source: Tensor,
        buffer: RemoteBuffer,
        slot: u64,
        slot_tensor: Option<Tensor>,
        name: Option<&str>,
    ) -> Result<Program> {
        let name = debug_name(name)?;
        let slot_tensor = slot_tensor.map(|t| t.0).unwrap_or(0);
        self.id(|out| unsafe {
            sys::mrt_program_copy_to_remote_buffer(
                self.as_ptr(),
                source.0,
                buffer.0,
                slot,
                slot_tensor,
                ptr_or_null(&name),
                out,
            )
        })
        .map(Program)
    }

    pub fn repeat(&self, count: u64, body: Program, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe { sys::mrt_program_repeat(self.as_ptr(), count, body.0, ptr_or_null(&name), out) })
            .map(Program)
    }

    /// Runs condition, then while the scalar predicate is non-zero
    /// (while_true) or zero runs body and condition again.
    pub fn repeat_while(
        &self,
        condition: Program,
        predicate: Tensor,
        body: Program,
        while_true: bool,
        name: Option<&str>,
    ) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe {
            sys::mrt_program_repeat_while(
                self.as_ptr(),
                condition.0,
                predicate.0,
                body.0,
                while_true,
                ptr_or_null(&name),
                out,
            )
        })
        .map(Program)
    }

    pub fn if_(
        &self,
        predicate: Tensor,
        then_body: Program,
        else_body: Option<Program>,
        name: Option<&str>,
    ) -> Result<Program> {
        let name = debug_name(name)?;
        let else_body = else_body.map(|p| p.0).unwrap_or(0);
        self.id(|out| unsafe {
            sys::mrt_program_if(self.as_ptr(), predicate.0, then_body.0, else_body, ptr_or_null(&name), out)
        })
        .map(Program)
    }

    pub fn switch(&self, control: Tensor, default_body: Option<Program>, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        let default_body = default_body.map(|p| p.0).unwrap_or(0);
        self.id(|out| unsafe {
            sys::mrt_program_switch(self.as_ptr(), control.0, default_body, ptr_or_null(&name), out)
        })
        .map(Program)
    }

    pub fn switch_add_case(&self, switch: Program, value: i32, body: Program) -> Result<()> {
        check(unsafe { sys::mrt_program_switch_add_case(self.as_ptr(), switch.0, value, body.0) })
    }

    pub fn sync(&self, sync_type: SyncType, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe { sys::mrt_program_sync(self.as_ptr(), sync_type as i32, ptr_or_null(&name), out) })
            .map(Program)
    }

    pub fn call(&self, function: Function, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe { sys::mrt_program_call(self.as_ptr(), function.0, ptr_or_null(&name), out) }).map(Program)
    }

    pub fn write_undef(&self, tensor: Tensor, name: Option<&str>) -> Result<Program> {
        let name = debug_name(name)?;
        self.id(|out| unsafe { sys::mrt_program_write_undef(self.as_ptr(), tensor.0, ptr_or_null(&name), out) })
            .map(Program)
    }

    pub fn print_tensor(&self, title: &str, tensor: Tensor) -> Result<Program> {
        let title = name_to_c(title)?;
        self.id(|out| unsafe { sys::mrt_program_print_tensor(self.as_ptr(), title.as_ptr(), tensor.0, out) })
            .map(Program)
    }

    // ---- Operations ----

    /// A new variable spread over `tiles` in whole rows.
    pub fn create_tensor(&self, data_type: DataType, shape: &[u64], name: &str, tiles: Tiles) -> Result<Tensor> {
        let name = name_to_c(name)?;
        self.id(|out| unsafe {
            sys::mrt_ops_create_tensor(
                self.as_ptr(),
                data_type.raw(),
                shape.as_ptr(),
                shape.len(),
                name.as_ptr(),
                tiles.first,
                tiles.count,
                out,
            )
        })
        .map(Tensor)
    }

    /// out = codelet(input) elementwise, appended to `sequence`; out_type
    /// None keeps the input's type.
    pub fn unary(
        &self,
        sequence: Program,
        codelet: &str,
        input: Tensor,
        out_type: Option<DataType>,
        name: &str,
    ) -> Result<Tensor> {
        let (codelet, name) = (name_to_c(codelet)?, name_to_c(name)?);
        let out_type = out_type.map(DataType::raw).unwrap_or(-1);
        self.id(|out| unsafe {
            sys::mrt_ops_unary(self.as_ptr(), sequence.0, codelet.as_ptr(), input.0, out_type, name.as_ptr(), out)
        })
        .map(Tensor)
    }

    pub fn binary(&self, sequence: Program, codelet: &str, a: Tensor, b: Tensor, name: &str) -> Result<Tensor> {
        let (codelet, name) = (name_to_c(codelet)?, name_to_c(name)?);
        self.id(|out| unsafe {
            sys::mrt_ops_binary(self.as_ptr(), sequence.0, codelet.as_ptr(), a.0, b.0, name.as_ptr(), out)
        })
        .map(Tensor)
    }

    /// a = codelet(a, b) in place.
    pub fn binary_in_place(&self, sequence: Program, codelet: &str, a: Tensor, b: Tensor) -> Result<()> {
        let codelet = name_to_c(codelet)?;
        check(unsafe { sys::mrt_ops_binary_in_place(self.as_ptr(), sequence.0, codelet.as_ptr(), a.0, b.0) })
    }

    pub fn fill(&self, sequence: Program, tensor: Tensor, value: f64) -> Result<()> {
        check(unsafe { sys::mrt_ops_fill(self.as_ptr(), sequence.0, tensor.0, value) })
    }

    /// `[M,K] x [K,N] -> [M,N]` of out_type (None: F32).
    pub fn matmul(
        &self,
        sequence: Program,
        a: Tensor,
        b: Tensor,
        out_type: Option<DataType>,
        name: &str,
        tiles: Tiles,
    ) -> Result<Tensor> {
        let name = name_to_c(name)?;
        let out_type = out_type.map(DataType::raw).unwrap_or(-1);
        self.id(|out| unsafe {
            sys::mrt_ops_matmul(
                self.as_ptr(),
                sequence.0,
                a.0,
                b.0,
                out_type,
                name.as_ptr(),
                tiles.first,
                tiles.count,
                out,
            )
        })
        .map(Tensor)
    }

    /// A variable laid out as matmul over `tiles` uses its `operand` of a
    /// `[M,K] x [K,N]` product.
    pub fn create_matmul_input(
        &self,
        operand: MatmulOperand,
        data_type: DataType,
        a_shape: [u64; 2],
        b_shape: [u64; 2],
        name: &str,
        tiles: Tiles,
    ) -> Result<Tensor> {
        let name = name_to_c(name)?;
        self.id(|out| unsafe {
            sys::mrt_ops_create_matmul_input(
                self.as_ptr(),
                operand as i32,
                data_type.raw(),
                a_shape.as_ptr(),
                b_shape.as_ptr(),
                name.as_ptr(),
                tiles.first,
                tiles.count,
                out,
            )
        })
        .map(Tensor)
    }

    /// Reduces over `axes` (empty: all).
    pub fn reduce(
        &self,
        sequence: Program,
        codelet: &str,
        input: Tensor,
        axes: &[u64],
        name: &str,
        tiles: Tiles,
    ) -> Result<Tensor> {
        let (codelet, name) = (name_to_c(codelet)?, name_to_c(name)?);
        self.id(|out| unsafe {
            sys::mrt_ops_reduce(
                self.as_ptr(),
                sequence.0,
                codelet.as_ptr(),
                input.0,
                axes.as_ptr(),
                axes.len(),
                name.as_ptr(),
                tiles.first,
                tiles.count,
                out,
            )
        })
        .map(Tensor)
    }

    pub fn softmax(&self, sequence: Program, input: Tensor, name: &str, tiles: Tiles) -> Result<Tensor> {
        let name = name_to_c(name)?;
        self.id(|out| unsafe {
            sys::mrt_ops_softmax(self.as_ptr(), sequence.0, input.0, name.as_ptr(), tiles.first, tiles.count, out)
        })
        .map(Tensor)
    }

    pub fn argmax(&self, sequence: Program, input: Tensor, name: &str, tiles: Tiles) -> Result<Tensor> {
        let name = name_to_c(name)?;
        self.id(|out| unsafe {
            sys::mrt_ops_argmax(self.as_ptr(), sequence.0, input.0, name.as_ptr(), tiles.first, tiles.count, out)
        })
        .map(Tensor)
    }

    // ---- Compiling ----

    /// Compiles the graph: `programs[i]` becomes program i of the executable.
    /// `options` are engine options; `progress` runs on this thread. A
    /// graph compiles once.
    pub fn compile(
        &self,
        programs: &[Program],
        options: &[(&str, &str)],
        progress: Option<ProgressCallback>,
    ) -> Result<Executable> {
        let ids: Vec<u64> = programs.iter().map(|p| p.0).collect();
        let options = CStrings::options(options)?;
        let (fn_, user_data, free): (sys::mrt_progress_fn, *mut c_void, Option<unsafe extern "C" fn(*mut c_void)>) =
            match progress {
                None => (None, ptr::null_mut(), None),
                Some(callback) => (
                    Some(progress_trampoline),
                    closure_user_data(callback),
                    Some(free_boxed::<std::sync::Mutex<ProgressCallback>>),
                ),
            };
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_graph_compile(
                self.as_ptr(),
                ids.as_ptr(),
                ids.len(),
                options.as_ptr(),
                fn_,
                user_data,
                free,
                &mut out,
            )
        })?;
        Ok(unsafe { Executable::from_raw(out) })
    }
}

pub(crate) unsafe extern "C" fn progress_trampoline(step: i32, total: i32, user_data: *mut c_void) {
    with_closure::<ProgressCallback, ()>(user_data, "a progress callback", (), |callback| callback(step, total));
}

impl Drop for Graph {
    fn drop(&mut self) {
        unsafe { sys::mrt_graph_destroy(self.raw.as_ptr()) }
    }
}

crate::ffi::debug_handle!(Graph);
