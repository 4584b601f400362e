//! `ape-chat --features cuda` builds llama.cpp's CUDA backend, which needs
//! the CUDA toolkit. Without one, llama.cpp's CMake fails deep inside a long
//! log; this script has no dependencies, so it runs first and stops the
//! build with a message that says what to install.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=CUDACXX");
    println!("cargo:rerun-if-env-changed=CUDA_PATH");
    println!("cargo:rerun-if-env-changed=PATH");
    if let Some(nvcc) = find_nvcc() {
        println!(
            "cargo:warning=building llama.cpp's CUDA backend with {}",
            nvcc.display()
        );
        return;
    }
    eprintln!(
        "\n\nape-chat --features cuda needs the CUDA toolkit (nvcc, the CUDA runtime and cuBLAS), \
and none was found (checked $CUDACXX, $CUDA_PATH/bin, PATH and /usr/local/cuda/bin).\n\
Install NVIDIA's CUDA toolkit (e.g. the cuda-toolkit package from NVIDIA's repository, or \
Debian/Ubuntu's nvidia-cuda-toolkit), or point CUDA_PATH at an installed one.\n\
Build for your GPU only with CMAKE_CUDA_ARCHITECTURES, e.g. \
`CMAKE_CUDA_ARCHITECTURES=90 GGML_CUDA_FA=OFF cargo build --release --features cuda`.\n\
No toolkit here? The default build runs on the CPU; or build with --features llama-shared \
and load llama.cpp's CUDA libraries built on the GPU machine (scripts/gpu-check.sh).\n\n"
    );
    std::process::exit(1);
}

fn find_nvcc() -> Option<PathBuf> {
    let exe = |p: PathBuf| p.is_file().then_some(p);
    if let Some(p) = std::env::var_os("CUDACXX").map(PathBuf::from).and_then(exe) {
        return Some(p);
    }
    if let Some(p) = std::env::var_os("CUDA_PATH").and_then(|r| exe(Path::new(&r).join("bin/nvcc")))
    {
        return Some(p);
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/local/cuda/bin")])
        .find_map(|d| exe(d.join("nvcc")))
}
