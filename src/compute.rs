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
use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The machine's locks, under the cache directory.
#[derive(Clone, Debug)]
pub struct Budget {
    dir: PathBuf,
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
        Self { dir }
    }

    fn open(&self, name: &str) -> io::Result<File> {
        std::fs::create_dir_all(&self.dir)?;
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(name))
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
        let compute = self.open("compute.lock")?;
        compute.lock()?;
        held._files.insert(0, compute);
        Ok(held)
    }

    /// For one unit of background work: `None` while a question waits or
    /// runs anywhere on the machine (try again later), else the compute
    /// lock once the unit in flight elsewhere (if any) is done.
    pub fn background(&self) -> io::Result<Option<Held>> {
        let ask = self.open("ask.lock")?;
        match ask.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) => return Err(e),
        }
        drop(ask);
        let compute = self.open("compute.lock")?;
        compute.lock()?;
        Ok(Some(Held {
            _files: vec![compute],
        }))
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
