//! APE's edit where llama.cpp's CUDA backend keeps `kq` in GPU memory.
//!
//! Copying every layer's `kq` to the host and back would cost a PCIe round
//! trip per layer per token; instead a small kernel (row max, per-chunk sums
//! of exps, the rewrite) runs on the tensor's own device pointer. It is
//! compiled at run time with NVRTC, and both the driver (`libcuda`) and NVRTC
//! are loaded with `dlopen`, so the binary builds and runs on machines with
//! no CUDA at all: nothing here is touched until a `kq` tensor is found
//! outside host memory, which only a CUDA build of llama.cpp produces.
//!
//! The callback runs after llama.cpp's scheduler has synchronised its stream,
//! so the tensor is complete; the kernel runs on a stream of ours and is
//! synchronised before the callback returns, so the softmax that follows
//! reads the edited logits. Everything reports errors as strings for the
//! hook's fault channel; nothing panics.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::ptr::null_mut;
use std::sync::{Mutex, OnceLock};

use libloading::Library;

type CuResult = c_int;
type CuDevicePtr = u64;
type CuContext = *mut c_void;
type CuModule = *mut c_void;
type CuFunction = *mut c_void;
type CuStream = *mut c_void;
type NvrtcProgram = *mut c_void;

const CU_POINTER_ATTRIBUTE_CONTEXT: c_int = 1;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
const CU_STREAM_NON_BLOCKING: c_uint = 1;
/// Threads per row: decoding has only `n_head` rows, each spanning every
/// chunk cell, so wide blocks keep long rows from being latency-bound.
const THREADS: c_uint = 1024;
/// Per-chunk sums live in shared memory (48 KiB by default).
pub(crate) const MAX_CHUNKS: usize = 8192;

/// One launch's work: rows of `n_kv` f32 logits at `data`, the chunk block
/// starting at column `col0` and split by `bounds` (offsets within the block).
pub(crate) struct Job<'a> {
    pub data: u64,
    pub n_kv: usize,
    pub rows: usize,
    pub col0: usize,
    pub bounds: &'a [usize],
    /// Raw `kq` → attention logit for the log-sum-exps (`kq_scale / T`).
    pub a: f32,
    /// `(1/T, (S·T − 1)/kq_scale)` when the APE rewrite applies.
    pub rewrite: Option<(f32, f32)>,
    /// Also return, per chunk, its attention share summed over the rows.
    pub shares: bool,
}

/// The row kernel. One block per row; all arithmetic in f32 with accurate
/// `expf`/`logf`, matching the CPU path to rounding. Shares are summed over
/// rows in f64 on the device, so one small copy returns them.
const KERNEL: &str = r#"
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
extern "C" __global__ void ape_chunk_edit(
        float* kq, long long n_kv, long long col0, const int* bounds, int n_chunks,
        float a, int rewrite, float inv_t, float shift_coef, double* shares) {
    extern __shared__ float sums[];
    __shared__ float partial[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float* x = kq + (long long)blockIdx.x * n_kv + col0;
    const int len = bounds[n_chunks];

    float m = __int_as_float(0xff800000);
    for (int j = threadIdx.x; j < len; j += blockDim.x) m = fmaxf(m, x[j]);
    m = warp_max(m);
    if (lane == 0) partial[warp] = m;
    for (int c = threadIdx.x; c < n_chunks; c += blockDim.x) sums[c] = 0.0f;
    __syncthreads();
    m = partial[0];
    for (int w = 1; w < warps; ++w) m = fmaxf(m, partial[w]);

    for (int c = 0; c < n_chunks; ++c) {
        float s = 0.0f;
        for (int j = bounds[c] + threadIdx.x; j < bounds[c + 1]; j += blockDim.x)
            s += expf(a * (x[j] - m));
        s = warp_sum(s);
        if (lane == 0 && s != 0.0f) atomicAdd(&sums[c], s);
    }
    __syncthreads();

    float total = 0.0f;
    for (int c = 0; c < n_chunks; ++c) total += sums[c];
    if (!(total > 0.0f) || !isfinite(m)) return;
    if (shares != 0)
        for (int c = threadIdx.x; c < n_chunks; c += blockDim.x)
            atomicAdd(&shares[c], (double)(sums[c] / total));
    if (rewrite) {
        const float shift = shift_coef * (a * m + logf(total));
        for (int j = threadIdx.x; j < len; j += blockDim.x) x[j] = fmaf(x[j], inv_t, shift);
    }
}
"#;

macro_rules! api {
    ($name:ident { $($f:ident: fn($($a:ty),*) -> $r:ty = $sym:literal;)* }) => {
        #[allow(non_snake_case)]
        struct $name { $($f: unsafe extern "C" fn($($a),*) -> $r,)* }
        impl $name {
            /// # Safety
            /// `lib` must be the library these C signatures describe.
            unsafe fn load(lib: &Library) -> Result<Self, String> {
                Ok(Self { $($f: {
                    // SAFETY: the caller vouches for the signature; the
                    // pointer stays valid while `lib` is loaded ('static here).
                    let s = unsafe { lib.get::<unsafe extern "C" fn($($a),*) -> $r>($sym) }
                        .map_err(|e| format!("missing {}: {e}", $sym))?;
                    *s
                },)* })
            }
        }
    };
}

api!(Driver {
    init: fn(c_uint) -> CuResult = "cuInit";
    error_string: fn(CuResult, *mut *const c_char) -> CuResult = "cuGetErrorString";
    pointer_attribute: fn(*mut c_void, c_int, CuDevicePtr) -> CuResult = "cuPointerGetAttribute";
    ctx_current: fn(*mut CuContext) -> CuResult = "cuCtxGetCurrent";
    ctx_push: fn(CuContext) -> CuResult = "cuCtxPushCurrent_v2";
    ctx_pop: fn(*mut CuContext) -> CuResult = "cuCtxPopCurrent_v2";
    ctx_device: fn(*mut c_int) -> CuResult = "cuCtxGetDevice";
    device_attribute: fn(*mut c_int, c_int, c_int) -> CuResult = "cuDeviceGetAttribute";
    module_load: fn(*mut CuModule, *const c_void) -> CuResult = "cuModuleLoadData";
    module_function: fn(*mut CuFunction, CuModule, *const c_char) -> CuResult = "cuModuleGetFunction";
    stream_create: fn(*mut CuStream, c_uint) -> CuResult = "cuStreamCreate";
    stream_sync: fn(CuStream) -> CuResult = "cuStreamSynchronize";
    stream_destroy: fn(CuStream) -> CuResult = "cuStreamDestroy_v2";
    launch: fn(CuFunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CuStream,
               *mut *mut c_void, *mut *mut c_void) -> CuResult = "cuLaunchKernel";
    alloc: fn(*mut CuDevicePtr, usize) -> CuResult = "cuMemAlloc_v2";
    free: fn(CuDevicePtr) -> CuResult = "cuMemFree_v2";
    htod: fn(CuDevicePtr, *const c_void, usize, CuStream) -> CuResult = "cuMemcpyHtoDAsync_v2";
    dtoh: fn(*mut c_void, CuDevicePtr, usize, CuStream) -> CuResult = "cuMemcpyDtoHAsync_v2";
    memset: fn(CuDevicePtr, u8, usize, CuStream) -> CuResult = "cuMemsetD8Async";
});

api!(Nvrtc {
    create: fn(*mut NvrtcProgram, *const c_char, *const c_char, c_int, *const *const c_char,
               *const *const c_char) -> c_int = "nvrtcCreateProgram";
    compile: fn(NvrtcProgram, c_int, *const *const c_char) -> c_int = "nvrtcCompileProgram";
    log_size: fn(NvrtcProgram, *mut usize) -> c_int = "nvrtcGetProgramLogSize";
    log: fn(NvrtcProgram, *mut c_char) -> c_int = "nvrtcGetProgramLog";
    cubin_size: fn(NvrtcProgram, *mut usize) -> c_int = "nvrtcGetCUBINSize";
    cubin: fn(NvrtcProgram, *mut c_char) -> c_int = "nvrtcGetCUBIN";
    destroy: fn(*mut NvrtcProgram) -> c_int = "nvrtcDestroyProgram";
});

/// The loaded CUDA libraries and the kernel, compiled once per context.
pub(crate) struct Cuda {
    driver: Driver,
    nvrtc: Nvrtc,
    /// Compiled kernel per CUDA context (one per GPU in practice).
    kernels: Mutex<Vec<(usize, usize)>>,
    _libs: [Library; 2],
}

// SAFETY: the function pointers are plain C entry points that CUDA documents
// as thread-safe; the kernel table is behind a mutex.
unsafe impl Send for Cuda {}
// SAFETY: as above.
unsafe impl Sync for Cuda {}

/// The process's CUDA, loaded on first use; `Err` says why it is unavailable
/// (the hook then falls back to copying `kq` through the host).
pub(crate) fn cuda() -> Result<&'static Cuda, String> {
    static CUDA: OnceLock<Result<Cuda, String>> = OnceLock::new();
    CUDA.get_or_init(Cuda::load).as_ref().map_err(Clone::clone)
}

/// Library names to try for NVRTC, most specific first: `$APE_CHAT_NVRTC`,
/// the loader's path, then the usual toolkit folders.
fn nvrtc_candidates() -> Vec<String> {
    let mut names: Vec<String> = std::env::var("APE_CHAT_NVRTC").into_iter().collect();
    let sonames = [
        "libnvrtc.so",
        "libnvrtc.so.13",
        "libnvrtc.so.12",
        "libnvrtc.so.11.2",
    ];
    names.extend(sonames.iter().map(|s| s.to_string()));
    let roots = std::env::var("CUDA_PATH")
        .into_iter()
        .chain(["/usr/local/cuda".to_string()]);
    for root in roots {
        names.extend(sonames.iter().map(|s| format!("{root}/lib64/{s}")));
    }
    names
}

fn open(names: &[String]) -> Result<Library, String> {
    let mut last = String::from("no candidates");
    for n in names {
        // SAFETY: CUDA's libraries run no unsound initialisers on load.
        match unsafe { Library::new(n) } {
            Ok(lib) => return Ok(lib),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

impl Cuda {
    fn load() -> Result<Self, String> {
        let driver_lib = open(&["libcuda.so.1".into(), "libcuda.so".into()])
            .map_err(|e| format!("CUDA driver not found ({e})"))?;
        let nvrtc_lib = open(&nvrtc_candidates()).map_err(|e| {
            format!("NVRTC not found ({e}); set APE_CHAT_NVRTC to libnvrtc.so's path")
        })?;
        // SAFETY: these are the CUDA driver and NVRTC, whose C signatures the
        // `api!` tables spell out.
        let (driver, nvrtc) = unsafe { (Driver::load(&driver_lib)?, Nvrtc::load(&nvrtc_lib)?) };
        let cuda = Self {
            driver,
            nvrtc,
            kernels: Mutex::new(Vec::new()),
            _libs: [driver_lib, nvrtc_lib],
        };
        // SAFETY: plain driver call.
        cuda.check(unsafe { (cuda.driver.init)(0) }, "cuInit")?;
        Ok(cuda)
    }

    fn check(&self, r: CuResult, what: &str) -> Result<(), String> {
        if r == 0 {
            return Ok(());
        }
        let mut msg: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorString writes a static string pointer or fails.
        let text = if unsafe { (self.driver.error_string)(r, &mut msg) } == 0 && !msg.is_null() {
            // SAFETY: a NUL-terminated static string from the driver.
            unsafe { CStr::from_ptr(msg) }
                .to_string_lossy()
                .into_owned()
        } else {
            format!("error {r}")
        };
        Err(format!("{what}: {text}"))
    }

    /// The context that owns device pointer `p` (else the thread's current one).
    fn context_of(&self, p: CuDevicePtr) -> Result<CuContext, String> {
        let mut ctx: CuContext = null_mut();
        // SAFETY: writes one CUcontext into `ctx`.
        let r = unsafe {
            (self.driver.pointer_attribute)(
                (&mut ctx as *mut CuContext).cast(),
                CU_POINTER_ATTRIBUTE_CONTEXT,
                p,
            )
        };
        if r != 0 || ctx.is_null() {
            // SAFETY: writes one CUcontext.
            let r = unsafe { (self.driver.ctx_current)(&mut ctx) };
            self.check(r, "cuCtxGetCurrent")?;
        }
        if ctx.is_null() {
            return Err("no CUDA context owns the attention tensor".into());
        }
        Ok(ctx)
    }

    /// The kernel for the current context, compiling it on first use.
    fn kernel(&self, ctx: CuContext) -> Result<CuFunction, String> {
        let mut table = self
            .kernels
            .lock()
            .map_err(|_| "CUDA kernel table poisoned")?;
        if let Some(&(_, f)) = table.iter().find(|(c, _)| *c == ctx as usize) {
            return Ok(f as CuFunction);
        }
        let (mut major, mut minor, mut dev) = (0, 0, 0);
        // SAFETY: plain queries writing one int each.
        unsafe {
            self.check((self.driver.ctx_device)(&mut dev), "cuCtxGetDevice")?;
            let attr = self.driver.device_attribute;
            self.check(
                attr(
                    &mut major,
                    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                    dev,
                ),
                "cuDeviceGetAttribute",
            )?;
            self.check(
                attr(
                    &mut minor,
                    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                    dev,
                ),
                "cuDeviceGetAttribute",
            )?;
        }
        let cubin = compile(
            &self.nvrtc,
            &format!("--gpu-architecture=sm_{major}{minor}"),
        )?;
        let (mut module, mut f): (CuModule, CuFunction) = (null_mut(), null_mut());
        // SAFETY: `cubin` is a complete CUBIN image for this device; the name
        // is NUL-terminated.
        unsafe {
            self.check(
                (self.driver.module_load)(&mut module, cubin.as_ptr().cast()),
                "cuModuleLoadData",
            )?;
            self.check(
                (self.driver.module_function)(&mut f, module, c"ape_chunk_edit".as_ptr()),
                "cuModuleGetFunction",
            )?;
        }
        table.push((ctx as usize, f as usize));
        Ok(f)
    }
}

/// Compiles [`KERNEL`] to a CUBIN with NVRTC.
fn compile(nvrtc: &Nvrtc, arch: &str) -> Result<Vec<u8>, String> {
    let src = CString::new(KERNEL).map_err(|e| e.to_string())?;
    let opt = CString::new(arch).map_err(|e| e.to_string())?;
    let opts = [opt.as_ptr()];
    let mut prog: NvrtcProgram = null_mut();
    // SAFETY: NUL-terminated strings that outlive the program; `prog` is
    // destroyed on every path below.
    unsafe {
        let r = (nvrtc.create)(
            &mut prog,
            src.as_ptr(),
            c"ape.cu".as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        );
        if r != 0 {
            return Err(format!("nvrtcCreateProgram failed ({r})"));
        }
        let compiled = (nvrtc.compile)(prog, 1, opts.as_ptr());
        let result = if compiled != 0 {
            let mut n = 0;
            (nvrtc.log_size)(prog, &mut n);
            let mut log = vec![0u8; n.max(1)];
            (nvrtc.log)(prog, log.as_mut_ptr().cast());
            Err(format!(
                "NVRTC could not compile the APE kernel for {arch}: {}",
                String::from_utf8_lossy(&log).trim_end_matches('\0').trim()
            ))
        } else {
            let mut n = 0;
            (nvrtc.cubin_size)(prog, &mut n);
            let mut bin = vec![0u8; n];
            match (nvrtc.cubin)(prog, bin.as_mut_ptr().cast()) {
                0 => Ok(bin),
                r => Err(format!("nvrtcGetCUBIN failed ({r})")),
            }
        };
        (nvrtc.destroy)(&mut prog);
        result
    }
}

/// A device buffer of ours, grown on demand.
#[derive(Default)]
struct DeviceBuf {
    ptr: CuDevicePtr,
    bytes: usize,
}

/// Per-session device resources on one context: a stream and the buffers for
/// chunk bounds and shares. Freed on drop.
pub(crate) struct DeviceScratch {
    cuda: &'static Cuda,
    ctx: CuContext,
    stream: CuStream,
    bounds: DeviceBuf,
    bounds_host: Vec<i32>,
    shares: DeviceBuf,
}

// SAFETY: a CUDA context and stream may be used from any thread; the session
// owning this is used by one thread at a time.
unsafe impl Send for DeviceScratch {}

/// Pushes `ctx` as current for the scope and pops it on drop.
struct Current<'a>(&'a Cuda);

impl<'a> Current<'a> {
    fn push(cuda: &'a Cuda, ctx: CuContext) -> Result<Self, String> {
        // SAFETY: `ctx` is a live context (from the driver).
        cuda.check(unsafe { (cuda.driver.ctx_push)(ctx) }, "cuCtxPushCurrent")?;
        Ok(Self(cuda))
    }
}

impl Drop for Current<'_> {
    fn drop(&mut self) {
        let mut popped = null_mut();
        // SAFETY: pops the context `push` made current.
        unsafe { (self.0.driver.ctx_pop)(&mut popped) };
    }
}

impl DeviceScratch {
    /// Scratch on the context that owns `data`.
    fn for_pointer(cuda: &'static Cuda, data: CuDevicePtr) -> Result<Self, String> {
        let ctx = cuda.context_of(data)?;
        let _cur = Current::push(cuda, ctx)?;
        let mut stream = null_mut();
        // SAFETY: creates a stream on the current context.
        let r = unsafe { (cuda.driver.stream_create)(&mut stream, CU_STREAM_NON_BLOCKING) };
        cuda.check(r, "cuStreamCreate")?;
        Ok(Self {
            cuda,
            ctx,
            stream,
            bounds: DeviceBuf::default(),
            bounds_host: Vec::new(),
            shares: DeviceBuf::default(),
        })
    }

    fn reserve(&self, buf: &mut DeviceBuf, bytes: usize) -> Result<(), String> {
        if buf.bytes >= bytes {
            return Ok(());
        }
        let d = &self.cuda.driver;
        if buf.ptr != 0 {
            // SAFETY: our own allocation, idle (the stream was synchronised).
            unsafe { (d.free)(buf.ptr) };
            *buf = DeviceBuf::default();
        }
        let mut ptr = 0;
        // SAFETY: allocates on the current context.
        let r = unsafe { (d.alloc)(&mut ptr, bytes) };
        self.cuda.check(r, "cuMemAlloc")?;
        *buf = DeviceBuf { ptr, bytes };
        Ok(())
    }

    /// Runs `job` and waits for it; returns per-chunk share sums if asked.
    fn run(&mut self, job: &Job<'_>) -> Result<Option<Vec<f64>>, String> {
        let cuda = self.cuda;
        let _cur = Current::push(cuda, self.ctx)?;
        let f = cuda.kernel(self.ctx)?;
        let d = &cuda.driver;
        let n_chunks = job.bounds.len() - 1;
        let bounds: Vec<i32> = job.bounds.iter().map(|&b| b as i32).collect();
        if bounds != self.bounds_host {
            let mut buf = std::mem::take(&mut self.bounds);
            self.reserve(&mut buf, bounds.len() * 4)?;
            self.bounds = buf;
            // SAFETY: copies `bounds` (pageable, staged before return) into a
            // buffer at least that large.
            let r = unsafe {
                (d.htod)(
                    self.bounds.ptr,
                    bounds.as_ptr().cast(),
                    bounds.len() * 4,
                    self.stream,
                )
            };
            self.check_d(r, "cuMemcpyHtoD")?;
            self.bounds_host = bounds;
        }
        let mut shares_ptr: CuDevicePtr = 0;
        if job.shares {
            let mut buf = std::mem::take(&mut self.shares);
            self.reserve(&mut buf, n_chunks * 8)?;
            self.shares = buf;
            shares_ptr = self.shares.ptr;
            // SAFETY: zeroes our own buffer on our stream.
            let r = unsafe { (d.memset)(shares_ptr, 0, n_chunks * 8, self.stream) };
            self.check_d(r, "cuMemsetD8")?;
        }
        let (inv_t, shift) = job.rewrite.unwrap_or((1.0, 0.0));
        let (mut data, mut n_kv, mut col0) = (job.data, job.n_kv as i64, job.col0 as i64);
        let (mut bptr, mut nc, mut a) = (self.bounds.ptr, n_chunks as c_int, job.a);
        let (mut rw, mut inv_t, mut shift, mut sp) =
            (c_int::from(job.rewrite.is_some()), inv_t, shift, shares_ptr);
        let mut params: [*mut c_void; 10] = [
            (&mut data as *mut u64).cast(),
            (&mut n_kv as *mut i64).cast(),
            (&mut col0 as *mut i64).cast(),
            (&mut bptr as *mut u64).cast(),
            (&mut nc as *mut c_int).cast(),
            (&mut a as *mut f32).cast(),
            (&mut rw as *mut c_int).cast(),
            (&mut inv_t as *mut f32).cast(),
            (&mut shift as *mut f32).cast(),
            (&mut sp as *mut u64).cast(),
        ];
        let shared = (n_chunks * 4) as c_uint;
        // SAFETY: `params` matches the kernel's signature one for one; the
        // tensor holds `rows × n_kv` f32 and the chunk block lies inside each
        // row (checked by the hook); our buffers hold bounds and shares.
        let r = unsafe {
            (d.launch)(
                f,
                job.rows as c_uint,
                1,
                1,
                THREADS,
                1,
                1,
                shared,
                self.stream,
                params.as_mut_ptr(),
                null_mut(),
            )
        };
        self.check_d(r, "cuLaunchKernel")?;
        let mut out = None;
        if job.shares {
            let mut v = vec![0f64; n_chunks];
            // SAFETY: `v` holds n_chunks f64; synchronised below before use.
            let r =
                unsafe { (d.dtoh)(v.as_mut_ptr().cast(), shares_ptr, n_chunks * 8, self.stream) };
            self.check_d(r, "cuMemcpyDtoH")?;
            out = Some(v);
        }
        // SAFETY: waits for our stream.
        self.check_d(unsafe { (d.stream_sync)(self.stream) }, "APE kernel")?;
        Ok(out)
    }

    fn check_d(&self, r: CuResult, what: &str) -> Result<(), String> {
        self.cuda.check(r, what)
    }
}

impl Drop for DeviceScratch {
    fn drop(&mut self) {
        let Ok(_cur) = Current::push(self.cuda, self.ctx) else {
            return;
        };
        let d = &self.cuda.driver;
        // SAFETY: our own stream and buffers; nothing else uses them.
        unsafe {
            (d.stream_sync)(self.stream);
            for b in [&self.bounds, &self.shares] {
                if b.ptr != 0 {
                    (d.free)(b.ptr);
                }
            }
            (d.stream_destroy)(self.stream);
        }
    }
}

/// The device path of a hook: scratch per CUDA context, created on first use.
#[derive(Default)]
pub(crate) struct Gpu {
    scratch: Vec<DeviceScratch>,
}

impl Gpu {
    /// Edits the chunk block of a device-resident `kq` in place.
    pub fn run(&mut self, job: &Job<'_>) -> Result<Option<Vec<f64>>, String> {
        if job.bounds.len() > MAX_CHUNKS + 1 {
            return Err(format!("more than {MAX_CHUNKS} chunks"));
        }
        let cuda = cuda()?;
        let ctx = cuda.context_of(job.data)?;
        let i = match self.scratch.iter().position(|s| s.ctx == ctx) {
            Some(i) => i,
            None => {
                self.scratch
                    .push(DeviceScratch::for_pointer(cuda, job.data)?);
                self.scratch.len() - 1
            }
        };
        self.scratch[i].run(job)
    }
}

/// Compiles the kernel for `arch` (e.g. `sm_90`) without a GPU, proving the
/// source valid CUDA: `Ok(None)` where NVRTC cannot be loaded, else the
/// CUBIN's size or the compiler's log.
pub fn compile_check(arch: &str) -> Result<Option<usize>, String> {
    let Ok(lib) = open(&nvrtc_candidates()) else {
        return Ok(None);
    };
    // SAFETY: this is NVRTC, whose signatures the table spells out.
    let nvrtc = unsafe { Nvrtc::load(&lib)? };
    compile(&nvrtc, &format!("--gpu-architecture={arch}")).map(|b| Some(b.len()))
}

#[cfg(test)]
mod tests {
    /// Needs NVRTC, so it is skipped (ignored) by default and reported as
    /// such; `scripts/test.sh` runs it wherever NVRTC is installed, and there
    /// a missing library is a failure, not a pass.
    #[test]
    #[ignore = "needs NVRTC (a CUDA toolkit); scripts/test.sh runs it where one is installed"]
    fn kernel_compiles_for_current_gpus() {
        for arch in ["sm_75", "sm_90"] {
            match super::compile_check(arch) {
                Ok(Some(bytes)) => assert!(bytes > 1000, "{arch}: {bytes}-byte CUBIN"),
                Ok(None) => panic!("NVRTC not found (set APE_CHAT_NVRTC to libnvrtc.so)"),
                Err(log) => panic!("{arch}: {log}"),
            }
        }
    }
}
