//! The interactive terminal UI (ratatui + crossterm). One event loop over one
//! channel: key presses (from an input thread), streamed tokens, index and
//! watcher reports all arrive as [`Msg`]s; each turn applies [`update`] and
//! redraws with [`view`]. Nothing here touches the engine: effects such as
//! "ask this" go to the caller, which hands them to the folder service.

pub mod model;
pub mod open;
pub mod view;

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{self, Event, KeyEventKind};

pub use model::{update, Effect, Model, Msg, SourceView, Status, Turn};
pub use view::view;

/// Runs the UI until the user quits, calling `on_effect` for every effect
/// but `Quit`, `Open` and `Copy` (carried out here: they need the
/// terminal). `tx` is the sender side of `rx`, used for key events;
/// `folder` is where sources are opened from. The terminal is restored on
/// exit and on panic.
pub fn run(
    mut model: Model,
    folder: &Path,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    mut on_effect: impl FnMut(&Model, Effect),
) -> std::io::Result<Model> {
    let mut terminal = ratatui::try_init()?;
    // While an editor runs in this terminal, keys are its own: the input
    // thread stops reading until it is back.
    let paused = Arc::new(AtomicBool::new(false));
    let input_paused = Arc::clone(&paused);
    std::thread::spawn(move || loop {
        if input_paused.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        match event::poll(Duration::from_millis(50)) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(_) => break,
        }
        let msg = match event::read() {
            Ok(Event::Key(k)) if k.kind == KeyEventKind::Press => Msg::Key(k),
            Ok(Event::Resize(..)) => Msg::Resize,
            Ok(_) => continue,
            Err(_) => break,
        };
        if tx.send(msg).is_err() {
            break;
        }
    });
    let result = (|| loop {
        terminal.draw(|f| view(f, &model))?;
        let Ok(first) = rx.recv() else { return Ok(()) };
        // Apply everything already queued (a burst of tokens) before drawing.
        for msg in std::iter::once(first).chain(rx.try_iter()) {
            for effect in update(&mut model, msg) {
                match effect {
                    Effect::Quit => return Ok(()),
                    Effect::Open(src) => {
                        let said = match open_source(folder, &src, &paused) {
                            Ok(()) => format!("opened {}", src.path),
                            Err(e) => format!("cannot open {}: {e}", src.path),
                        };
                        terminal = ratatui::try_init()?;
                        terminal.clear()?;
                        model.status.activity = said;
                    }
                    Effect::Copy(text) => {
                        let mut out = std::io::stdout();
                        out.write_all(open::osc52(&text).as_bytes())?;
                        out.flush()?;
                        model.status.activity = "answer copied to the clipboard".into();
                    }
                    effect => on_effect(&model, effect),
                }
            }
        }
    })();
    ratatui::try_restore()?;
    result.map(|()| model)
}

/// Opens `src`: an editor in this terminal (the UI steps aside and input
/// pauses until it exits), or the desktop opener, left running.
fn open_source(folder: &Path, src: &SourceView, paused: &AtomicBool) -> Result<(), String> {
    let editor = std::env::var("VISUAL")
        .ok()
        .or_else(|| std::env::var("EDITOR").ok())
        .filter(|e| !e.trim().is_empty());
    let o = open::opener(folder, src, editor.as_deref(), open::desktop())?;
    let mut cmd = std::process::Command::new(&o.program);
    cmd.args(&o.args);
    if o.in_terminal {
        paused.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(60)); // the input thread's poll ends
        let _ = ratatui::try_restore();
        let status = cmd.status();
        paused.store(false, Ordering::SeqCst);
        match status {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("{} exited with {s}", o.program)),
            Err(e) => Err(format!("{}: {e}", o.program)),
        }
    } else {
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map(drop)
            .map_err(|e| format!("{}: {e}", o.program))
    }
}
