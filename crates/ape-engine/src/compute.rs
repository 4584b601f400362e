//! One compute budget for the whole machine, questions first.
//!
//! Two llama.cpp computations on the same cores make both crawl (a 2-core
//! machine decoded at 0.4 tokens/s while a second ape-chat process
//! indexed). So every answer and background unit takes `compute.lock` (a
//! file lock, so it holds across processes: `watch`, `serve`, the TUI,
//! `--ask`), and a question also holds `ask.lock` (shared) while it waits
//! and answers. Measurements (`bench`, `eval`, `calibrate`, `doctor`) take
//! no lock: they are run on a quiet machine.
//! Background work (embedding, state encoding) runs one unit at a time and
//! starts a unit only while no question holds `ask.lock`, and a state
//! encoding in flight stops when one is announced: a question waits
//! milliseconds for llama.cpp (an embedding batch in flight still ends
//! first), wherever it runs.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a question waits for another computation before it says why
/// it cannot go on (a stopped process, Ctrl-Z, holds the lock for good):
/// longer than the longest honest answer on a slow machine.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(300);

/// The machine's locks, under the cache directory.
#[derive(Clone, Debug)]
pub struct Budget {
    dir: PathBuf,
    timeout: Duration,
}

/// Locks held until dropped.
#[derive(Debug)]
pub struct Held {
    _files: Vec<File>,
}

impl Default for Budget {
    fn default() -> Self {
        Self::at(crate::paths::locks_dir())
    }
}

impl Budget {
    /// The locks in `dir` (tests use their own).
    pub fn at(dir: PathBuf) -> Self {
        Self {
            dir,
            timeout: LOCK_TIMEOUT,
        }
    }

    /// Waits at most `timeout` for the compute lock.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn open(&self, name: &str) -> io::Result<File> {
        std::fs::create_dir_all(&self.dir)?;
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(self.dir.join(name))
    }

    /// The compute lock, waited for at most the timeout; it then holds
    /// this process's id, for the message another process may need.
    fn compute(&self) -> io::Result<File> {
        let mut f = self.open("compute.lock")?;
        let deadline = Instant::now() + self.timeout;
        let mut wait = Duration::from_millis(2);
        loop {
            match f.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_millis(10));
                }
                Err(TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = f.read_to_string(&mut holder);
                    let who = match holder.trim().parse::<u32>() {
                        Ok(pid) => format!("ape-chat process {pid}"),
                        Err(_) => "another ape-chat process".into(),
                    };
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "{who} has kept the model's cores for over {} s; if it is stopped \
                             (Ctrl-Z), resume or end it",
                            self.timeout.as_secs()
                        ),
                    ));
                }
                Err(TryLockError::Error(e)) => return Err(e),
            }
        }
        let _ = f.set_len(0);
        let _ = f.rewind();
        let _ = write!(f, "{}", std::process::id());
        Ok(f)
    }

    /// For a question about to be asked: background work anywhere yields
    /// (stopping a unit in flight, see [`Budget::interrupt`]) while this is
    /// held. The TUI takes it the moment a question is typed.
    pub fn announce(&self) -> io::Result<Held> {
        let ask = self.open("ask.lock")?;
        ask.lock_shared()?;
        Ok(Held { _files: vec![ask] })
    }

    /// For a question: announces it, then waits for the computation in
    /// flight to end.
    pub fn question(&self) -> io::Result<Held> {
        let mut held = self.announce()?;
        held._files.insert(0, self.compute()?);
        Ok(held)
    }

    /// For one unit of background work: `None` while a question waits or
    /// runs anywhere on the machine, or the compute lock stays held past
    /// the timeout (try again later), else the compute lock once the unit
    /// in flight elsewhere (if any) is done.
    pub fn background(&self) -> io::Result<Option<Held>> {
        let ask = self.open("ask.lock")?;
        match ask.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) => return Err(e),
        }
        drop(ask);
        match self.compute() {
            Ok(compute) => Ok(Some(Held {
                _files: vec![compute],
            })),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether a question waits or runs anywhere (cheap; for long loops
    /// that hold no lock between units).
    pub fn question_waiting(&self) -> bool {
        self.open("ask.lock")
            .map(|f| matches!(f.try_lock(), Err(TryLockError::WouldBlock)))
            .unwrap_or(false)
    }

    /// A check for a background computation to stop at once when a
    /// question is announced ([`crate::engine::Interrupt`]): the unit in
    /// flight is dropped and done again later, so a question never waits
    /// for a whole chunk's encoding. It looks at most every 20 ms.
    pub fn interrupt(&self) -> crate::engine::Interrupt {
        let budget = self.clone();
        let mut last = Instant::now();
        Box::new(move || {
            if last.elapsed() < Duration::from_millis(20) {
                return false;
            }
            last = Instant::now();
            budget.question_waiting()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_holds_background_work_off_until_it_is_answered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let budget = Budget::at(dir.path().to_path_buf());
        let unit = budget.background().expect("lock").expect("no question yet");
        drop(unit);
        let q = budget.question().expect("question");
        assert!(budget.question_waiting());
        assert!(
            budget.background().expect("lock").is_none(),
            "background yields"
        );
        // Another question is not refused (it waits for the compute lock,
        // which this thread holds: check the announce half only).
        let other = budget.open("ask.lock").expect("open");
        other
            .lock_shared()
            .expect("questions share the announcement");
        drop(other);
        drop(q);
        assert!(!budget.question_waiting());
        assert!(budget.background().expect("lock").is_some());
    }

    #[test]
    fn the_interrupt_check_sees_an_announced_question() {
        let dir = tempfile::tempdir().expect("tempdir");
        let budget = Budget::at(dir.path().to_path_buf());
        let mut check = budget.interrupt();
        let after_a_look = |check: &mut crate::engine::Interrupt| {
            std::thread::sleep(Duration::from_millis(25));
            check()
        };
        assert!(!after_a_look(&mut check), "no question yet");
        let announced = budget.announce().expect("announce");
        assert!(after_a_look(&mut check), "a question was announced");
        drop(announced);
        assert!(!after_a_look(&mut check), "the question is gone");
    }

    /// A holder that never lets go (a process stopped with Ctrl-Z): the
    /// question says who holds the cores instead of waiting for ever, and
    /// background work just yields.
    #[test]
    fn a_lock_held_for_good_is_a_clear_error_not_a_hang() {
        let dir = tempfile::tempdir().expect("tempdir");
        let holder = Budget::at(dir.path().to_path_buf());
        let _held = holder.background().expect("lock").expect("unit");
        let waiter = Budget::at(dir.path().to_path_buf()).with_timeout(Duration::from_millis(100));
        let e = waiter.question().expect_err("times out");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        let pid = std::process::id().to_string();
        assert!(e.to_string().contains(&pid), "{e}");
        assert!(e.to_string().contains("Ctrl-Z"), "{e}");
        drop(e);
        assert!(waiter.background().expect("no error").is_none());
    }

    #[test]
    fn a_question_waits_for_the_unit_in_flight() {
        let dir = tempfile::tempdir().expect("tempdir");
        let budget = Budget::at(dir.path().to_path_buf());
        let unit = budget.background().expect("lock").expect("unit");
        let b2 = budget.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let _q = b2.question().expect("question");
            tx.send(()).expect("send");
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(rx.try_recv().is_err(), "the question waits for the unit");
        assert!(budget.question_waiting(), "but is announced at once");
        drop(unit);
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("answered after the unit");
        t.join().expect("join");
    }
}
