//! A competing process for `bench ttft --under-load`: another program
//! computing with llama.cpp on the same cores, as a second ape-chat with its
//! own cache or any llama.cpp tool would. Within ape-chat the compute budget
//! keeps computations apart; next to other programs it cannot, and decode
//! speed there is part of what a user gets.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{bench_chunks, BenchError};
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{Engine, EngineOptions, PromptLayout};

/// ggml's default polling level, which llama.cpp's own tools run with: the
/// competitor's workers spin between graphs as theirs do.
const STOCK_POLL: u32 = 50;
/// What the competitor prints once it computes.
const READY: &str = "computing";

/// In the competitor process: loads `model` on `threads` threads and
/// prefills 256-token chunks until its stdin closes (the bench is done or
/// gone), saying [`READY`] on stdout after the first.
pub fn compete(model: &Path, threads: usize) -> Result<(), BenchError> {
    let engine = Engine::load(
        model,
        EngineOptions {
            threads,
            ctx_tokens: 1024,
            poll: STOCK_POLL,
            ..EngineOptions::default()
        },
    )?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        flag.store(true, Ordering::Relaxed);
    });
    let layout = PromptLayout::new(&engine, DEFAULT_SYSTEM_PROMPT)?;
    let mut s = engine.session()?;
    let prefix = s.encode_prefix(&layout.prefix)?;
    let chunks = bench_chunks(&engine, 8, 256);
    let mut announced = false;
    for c in chunks.iter().cycle() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        s.encode_chunk(&prefix, c)?;
        if !announced {
            println!("{READY}");
            announced = true;
        }
    }
    Ok(())
}

/// A running competitor, stopped (stdin closed, then killed) on drop.
pub struct Competitor {
    child: Child,
    stdin: Option<ChildStdin>,
    /// How it was started, for reports.
    pub what: String,
}

impl Competitor {
    /// Starts this executable as a competitor on `model` with `threads`
    /// threads and returns once it computes.
    pub fn start(model: &Path, threads: usize) -> Result<Self, BenchError> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .args([
                "bench",
                "compete",
                "--threads",
                &threads.to_string(),
                "--model",
            ])
            .arg(model)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let mut me = Self {
            child,
            stdin,
            what: format!(
                "a second process prefilling 256-token chunks on the same model, {threads} threads, polling {STOCK_POLL} (llama.cpp's default)"
            ),
        };
        if !stdout.is_some_and(wait_ready) {
            let status = me.child.wait()?;
            return Err(BenchError::Setup(format!(
                "the competing process stopped before computing ({status})"
            )));
        }
        Ok(me)
    }
}

/// Whether the competitor said it computes before closing its stdout.
fn wait_ready(out: ChildStdout) -> bool {
    let mut lines = BufReader::new(out).lines();
    let ready = lines.any(|l| l.is_ok_and(|l| l.trim() == READY));
    // Keep draining so the competitor never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    ready
}

impl Drop for Competitor {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
