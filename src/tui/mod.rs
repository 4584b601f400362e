//! The interactive terminal UI (ratatui + crossterm). One event loop over one
//! channel: key presses (from an input thread), streamed tokens, index and
//! watcher reports all arrive as [`Msg`]s; each turn applies [`update`] and
//! redraws with [`view`]. Nothing here touches the engine: effects such as
//! "ask this" go to the caller, which talks to a background worker.

pub mod model;
pub mod view;

use std::sync::mpsc::{Receiver, Sender};

use crossterm::event::{self, Event, KeyEventKind};

pub use model::{update, Effect, Model, Msg, SourceView, Status, Turn};
pub use view::view;

/// Runs the UI until the user quits, calling `on_effect` for every effect
/// but `Quit`. `tx` is the sender side of `rx`, used for key events. The
/// terminal is restored on exit and on panic.
pub fn run(
    mut model: Model,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    mut on_effect: impl FnMut(&Model, Effect),
) -> std::io::Result<Model> {
    let mut terminal = ratatui::try_init()?;
    std::thread::spawn(move || loop {
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
                if effect == Effect::Quit {
                    return Ok(());
                }
                on_effect(&model, effect);
            }
        }
    })();
    ratatui::try_restore()?;
    result.map(|()| model)
}
