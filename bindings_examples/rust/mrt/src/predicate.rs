//! AnchorPredicate: which policy each anchor gets when a session binds its
//! streams (the seeds' predicate_factory).
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use crate::callback::{call_guarded, free_boxed, into_user_data, user_data_ref};
use crate::error::{check, invalid, Result};
use crate::ffi::name_to_c;
use crate::model::{AnchorInfo, Model};
use crate::sys;

/// What a predicate of kind AnchorCallback decides (mrt_anchor_callback_policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallbackPolicy {
    BindUserCallback = 0,
    BindEmptyCallback = 1,
    Skip = 2,
}

/// What a predicate of kind PopefDataUsage decides (mrt_popef_data_usage_policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataUsagePolicy {
    UsePopefDataIfAny = 0,
    UseUserData = 1,
}

/// A predicate's kind with its policy type: the predicate's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    Callback(CallbackPolicy),
    DataUsage(DataUsagePolicy),
}

impl Policy {
    fn kind(self) -> i32 {
        match self {
            Policy::Callback(_) => sys::MRT_PREDICATE_ANCHOR_CALLBACK as i32,
            Policy::DataUsage(_) => sys::MRT_PREDICATE_POPEF_DATA_USAGE as i32,
        }
    }

    fn raw(self) -> i32 {
        match self {
            Policy::Callback(p) => p as i32,
            Policy::DataUsage(p) => p as i32,
        }
    }

    /// The kind shared by every policy of one predicate; policies of two
    /// kinds are refused (the raw values of one would be read as the other's).
    fn common_kind(policies: &[Policy]) -> Result<i32> {
        let kind = policies[0].kind();
        match policies.iter().find(|p| p.kind() != kind) {
            None => Ok(kind),
            Some(other) => {
                Err(invalid(format!("policies of one predicate must be of one kind: {:?} and {other:?}", policies[0])))
            }
        }
    }

    /// A raw result of a predicate of kind `kind`.
    fn from_raw(kind: i32, raw: i32) -> Policy {
        if kind == sys::MRT_PREDICATE_POPEF_DATA_USAGE as i32 {
            Policy::DataUsage(if raw == 1 { DataUsagePolicy::UseUserData } else { DataUsagePolicy::UsePopefDataIfAny })
        } else {
            Policy::Callback(match raw {
                0 => CallbackPolicy::BindUserCallback,
                1 => CallbackPolicy::BindEmptyCallback,
                _ => CallbackPolicy::Skip,
            })
        }
    }
}

/// The prebuilt predicates (mrt_prebuilt_predicate).
#[derive(Clone, Copy, Debug)]
pub enum Prebuilt<'a> {
    /// Anchors moved by the model's Load / Main / Save programs.
    ProgramFlowLoad(&'a Model),
    ProgramFlowMain(&'a Model),
    ProgramFlowSave(&'a Model),
    /// Anchors no program moves.
    ProgramNotAssigned,
    /// Anchors of rank >= 1 (callback policies only).
    NonScalarType,
    /// Anchors moved by any of these programs.
    ProgramIndexes(&'a [u64]),
}

/// An immutable predicate: usable from any thread and by any number of
/// sessions, which keep their own reference. Send and Sync.
pub struct AnchorPredicate {
    raw: NonNull<sys::mrt_anchor_predicate>,
    kind: i32,
}

// mrt_c.h: "Immutable once made: may be used from any number of threads".
unsafe impl Send for AnchorPredicate {}
unsafe impl Sync for AnchorPredicate {}

/// The closure of a user predicate and the kind of its results.
struct UserPredicate<F> {
    function: F,
    kind: i32,
}

impl AnchorPredicate {
    fn from_raw(raw: *mut sys::mrt_anchor_predicate, kind: i32) -> AnchorPredicate {
        AnchorPredicate { raw: NonNull::new(raw).expect("MRT_OK and a NULL predicate"), kind }
    }

    pub(crate) fn as_ptr(&self) -> *const sys::mrt_anchor_predicate {
        self.raw.as_ptr()
    }

    /// A prebuilt predicate: `accept` for the anchors it selects, `reject`
    /// for the others (both of one kind: Status::InvalidArgument otherwise).
    pub fn prebuilt(which: Prebuilt<'_>, accept: Policy, reject: Policy) -> Result<AnchorPredicate> {
        let (prebuilt, model, programs): (u32, *const sys::mrt_model, &[u64]) = match which {
            Prebuilt::ProgramFlowLoad(m) => (sys::MRT_PRED_PROGRAM_FLOW_LOAD, m.as_ptr(), &[]),
            Prebuilt::ProgramFlowMain(m) => (sys::MRT_PRED_PROGRAM_FLOW_MAIN, m.as_ptr(), &[]),
            Prebuilt::ProgramFlowSave(m) => (sys::MRT_PRED_PROGRAM_FLOW_SAVE, m.as_ptr(), &[]),
            Prebuilt::ProgramNotAssigned => (sys::MRT_PRED_PROGRAM_NOT_ASSIGNED, ptr::null(), &[]),
            Prebuilt::NonScalarType => (sys::MRT_PRED_NON_SCALAR_TYPE, ptr::null(), &[]),
            Prebuilt::ProgramIndexes(p) => (sys::MRT_PRED_PROGRAM_INDEXES, ptr::null(), p),
        };
        let kind = Policy::common_kind(&[accept, reject])?;
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_anchor_predicate_create(
                kind,
                prebuilt as i32,
                model,
                programs.as_ptr(),
                programs.len(),
                accept.raw(),
                reject.raw(),
                &mut out,
            )
        })?;
        Ok(AnchorPredicate::from_raw(out, kind))
    }

    /// The first group whose programs move an anchor gives its policy;
    /// `reject` if none does.
    pub fn program_policies(groups: &[(&[u64], Policy)], reject: Policy) -> Result<AnchorPredicate> {
        let raw: Vec<sys::mrt_programs_with_policy> = groups
            .iter()
            .map(|(programs, policy)| sys::mrt_programs_with_policy {
                programs: programs.as_ptr(),
                num_programs: programs.len(),
                policy: policy.raw(),
            })
            .collect();
        let policies: Vec<Policy> = groups.iter().map(|(_, p)| *p).chain(Some(reject)).collect();
        let kind = Policy::common_kind(&policies)?;
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_anchor_predicate_create_program_policies(kind, raw.as_ptr(), raw.len(), reject.raw(), &mut out)
        })?;
        Ok(AnchorPredicate::from_raw(out, kind))
    }

    /// The anchors named by handle get their policy, others `reject`.
    pub fn anchor_policies(entries: &[(&str, Policy)], reject: Policy) -> Result<AnchorPredicate> {
        let handles = entries.iter().map(|(handle, _)| name_to_c(handle)).collect::<Result<Vec<_>>>()?;
        let raw: Vec<sys::mrt_anchor_with_policy> = entries
            .iter()
            .zip(&handles)
            .map(|((_, policy), handle)| sys::mrt_anchor_with_policy { handle: handle.as_ptr(), policy: policy.raw() })
            .collect();
        let policies: Vec<Policy> = entries.iter().map(|(_, p)| *p).chain(Some(reject)).collect();
        let kind = Policy::common_kind(&policies)?;
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_anchor_predicate_create_anchor_policies(kind, raw.as_ptr(), raw.len(), reject.raw(), &mut out)
        })?;
        Ok(AnchorPredicate::from_raw(out, kind))
    }

    /// A Rust function: it may be called from several threads at once (Fn +
    /// Sync). It must return policies of the kind of `kind_of`; a panic makes
    /// the call using the predicate fail (as a value outside the enum does).
    pub fn from_fn<F>(kind_of: Policy, function: F) -> Result<AnchorPredicate>
    where
        F: Fn(&AnchorInfo) -> Policy + Send + Sync + 'static,
    {
        let kind = kind_of.kind();
        let user_data = into_user_data(UserPredicate { function, kind });
        let mut out = ptr::null_mut();
        // The library frees user_data itself if this fails.
        check(unsafe {
            sys::mrt_anchor_predicate_create_user(
                kind,
                Some(predicate_trampoline::<F>),
                user_data,
                Some(free_boxed::<UserPredicate<F>>),
                &mut out,
            )
        })?;
        Ok(AnchorPredicate::from_raw(out, kind))
    }

    /// All (`and`) or any (`or`) of the predicates give `accept`.
    pub fn all(predicates: &[&AnchorPredicate], accept: Policy, reject: Policy) -> Result<AnchorPredicate> {
        AnchorPredicate::combine(sys::mrt_anchor_predicate_and, predicates, accept, reject)
    }

    pub fn any(predicates: &[&AnchorPredicate], accept: Policy, reject: Policy) -> Result<AnchorPredicate> {
        AnchorPredicate::combine(sys::mrt_anchor_predicate_or, predicates, accept, reject)
    }

    fn combine(
        create: unsafe extern "C" fn(
            i32,
            i32,
            i32,
            *const *const sys::mrt_anchor_predicate,
            usize,
            *mut *mut sys::mrt_anchor_predicate,
        ) -> i32,
        predicates: &[&AnchorPredicate],
        accept: Policy,
        reject: Policy,
    ) -> Result<AnchorPredicate> {
        let raw: Vec<*const sys::mrt_anchor_predicate> = predicates.iter().map(|p| p.as_ptr()).collect();
        let kind = Policy::common_kind(&[accept, reject])?;
        let mut out = ptr::null_mut();
        check(unsafe { create(kind, accept.raw(), reject.raw(), raw.as_ptr(), raw.len(), &mut out) })?;
        Ok(AnchorPredicate::from_raw(out, kind))
    }

    /// The policy for the anchor of `model` whose handle is `handle`.
    pub fn evaluate(&self, model: &Model, handle: &str) -> Result<Policy> {
        let handle = name_to_c(handle)?;
        let mut policy = 0;
        check(unsafe {
            sys::mrt_anchor_predicate_evaluate(self.as_ptr(), model.as_ptr(), handle.as_ptr(), &mut policy)
        })?;
        Ok(Policy::from_raw(self.kind, policy))
    }
}

unsafe extern "C" fn predicate_trampoline<F>(anchor: *const sys::mrt_anchor_info, user_data: *mut c_void) -> i32
where
    F: Fn(&AnchorInfo) -> Policy + Send + Sync + 'static,
{
    let predicate = user_data_ref::<UserPredicate<F>>(user_data);
    let anchor = AnchorInfo::from_raw(&*anchor);
    // -1 is outside every policy enum: the library fails the call using it.
    call_guarded("an anchor predicate", -1, || {
        let policy = (predicate.function)(&anchor);
        if policy.kind() == predicate.kind {
            policy.raw()
        } else {
            -1
        }
    })
}

impl Drop for AnchorPredicate {
    fn drop(&mut self) {
        unsafe { sys::mrt_anchor_predicate_destroy(self.raw.as_ptr()) }
    }
}

crate::ffi::debug_handle!(AnchorPredicate);
