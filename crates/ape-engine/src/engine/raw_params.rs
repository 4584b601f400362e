//! The two places ape-chat reaches under `llama-cpp-2` 0.1.160 (pinned):
//!
//! 1. installing `cb_eval`, which it has no setter for. `LlamaContextParams`
//!    is a struct whose only field is the raw `llama_context_params`.
//!    `transmute` refuses to compile unless both types have the same size,
//!    and a single field that fills its struct's whole size must sit at
//!    offset 0, so the two types share one layout. The alignment check below
//!    guards the other half; a crate upgrade that changes it fails to build.
//! 2. the raw `llama_context`, which it keeps private, to attach a
//!    persistent thread pool and the abort callback ([`context_ptr`]).

use std::ffi::c_void;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_sys_2 as sys;

const _: () = assert!(
    std::mem::align_of::<LlamaContextParams>() == std::mem::align_of::<sys::llama_context_params>()
);

/// Signature of llama.cpp's `ggml_backend_sched_eval_callback`.
pub(crate) type EvalCallback =
    unsafe extern "C" fn(t: *mut sys::ggml_tensor, ask: bool, user_data: *mut c_void) -> bool;

/// Returns `params` with the eval callback and its user data set.
pub(crate) fn with_eval_callback(
    params: LlamaContextParams,
    callback: EvalCallback,
    user_data: *mut c_void,
) -> LlamaContextParams {
    let mut raw = into_raw(params);
    raw.cb_eval = Some(callback);
    raw.cb_eval_user_data = user_data;
    // SAFETY: same layout (module docs); every field came from a valid value.
    unsafe { std::mem::transmute::<sys::llama_context_params, LlamaContextParams>(raw) }
}

fn into_raw(params: LlamaContextParams) -> sys::llama_context_params {
    // SAFETY: same layout (module docs).
    unsafe { std::mem::transmute::<LlamaContextParams, sys::llama_context_params>(params) }
}

/// The raw `llama_context` behind `ctx`. llama-cpp-2 keeps the pointer
/// private but prints it in its `Debug` output (`LlamaContext { context:
/// 0x… }`); the address is read from there, and `None` comes back if the
/// output has another shape. A test pins the format against llama.cpp's
/// own answer for the context (its cell count).
pub(crate) fn context_ptr(
    ctx: &llama_cpp_2::context::LlamaContext<'_>,
) -> Option<std::ptr::NonNull<sys::llama_context>> {
    let text = format!("{ctx:?}");
    let rest = text.strip_prefix("LlamaContext { context: 0x")?;
    let hex: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
    let addr = usize::from_str_radix(&hex, 16).ok()?;
    let raw = std::ptr::NonNull::new(addr as *mut sys::llama_context)?;
    // SAFETY: the address llama-cpp-2 printed for its live context (format
    // pinned by the test below); a cell count that disagrees means it is
    // not the context we think, and it is left alone.
    (unsafe { sys::llama_n_ctx(raw.as_ptr()) } == ctx.n_ctx()).then_some(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;

    unsafe extern "C" fn noop(_: *mut sys::ggml_tensor, _: bool, _: *mut c_void) -> bool {
        true
    }

    #[test]
    fn fields_survive_the_round_trip() {
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(1234))
            .with_n_batch(77)
            .with_kv_unified(true);
        let marker = 0xABCD_usize as *mut c_void;
        let back = with_eval_callback(params, noop, marker);
        assert_eq!(back.n_ctx(), NonZeroU32::new(1234));
        assert_eq!(back.n_batch(), 77);
        assert!(back.kv_unified());
        let raw = into_raw(back);
        assert_eq!(raw.cb_eval_user_data, marker);
        assert!(raw.cb_eval.is_some());
        assert_eq!(raw.n_ctx, 1234);
    }
}
