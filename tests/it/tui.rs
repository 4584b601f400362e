//! The real binary in a real terminal (tmux): type a question, see the
//! streamed answer, its sources and the status bar.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{embed_model_dir, ort_lib, tiny_model_path};

struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .output();
    }
}

fn capture(name: &str) -> String {
    let out = Command::new("tmux")
        .args(["capture-pane", "-p", "-t", name])
        .output()
        .expect("tmux capture-pane");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_for(name: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let screen = capture(name);
        if pred(&screen) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn a_question_typed_in_the_ui_gets_a_streamed_answer_with_sources() {
    let cache = tempfile::tempdir().expect("tempdir");
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sample");
    let name = format!("ape-chat-test-{}", std::process::id());
    let cmd = format!(
        "env APE_CHAT_CACHE_DIR='{}' APE_CHAT_CONFIG='{}' APE_CHAT_EMBED_MODEL='{}' ORT_DYLIB_PATH='{}' '{}' '{}' --model '{}' --max-tokens 24",
        cache.path().display(),
        cache.path().join("config.toml").display(),
        embed_model_dir().display(),
        ort_lib().display(),
        env!("CARGO_BIN_EXE_ape-chat"),
        docs.display(),
        tiny_model_path().display(),
    );
    let status = Command::new("tmux")
        .args([
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "120",
            "-y",
            "36",
            &cmd,
        ])
        .status()
        .expect("tmux (installed by scripts/setup.sh)");
    assert!(status.success());
    let _session = Session(name.clone());
    wait_for(&name, "the index", |s| {
        s.contains("10 chunks") && s.contains("ready")
    });

    Command::new("tmux")
        .args([
            "send-keys",
            "-t",
            &name,
            "Where are the encryption keys kept?",
            "Enter",
        ])
        .status()
        .expect("send-keys");
    let screen = wait_for(&name, "the answer", |s| {
        s.contains("TTFT") && s.contains("% ")
    });
    assert!(
        screen.contains("you: Where are the encryption keys kept?"),
        "{screen}"
    );
    assert!(
        screen.contains("backup-policy.md"),
        "sources pane lists the backup policy:\n{screen}"
    );
    let answer_lines = screen
        .lines()
        .skip_while(|l| !l.contains("you: Where"))
        .skip(1)
        .take(3);
    assert!(
        answer_lines
            .into_iter()
            .any(|l| l.chars().filter(|c| c.is_alphanumeric()).count() > 3),
        "{screen}"
    );

    Command::new("tmux")
        .args(["send-keys", "-t", &name, "C-d"])
        .status()
        .expect("send-keys");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Command::new("tmux")
        .args(["has-session", "-t", &name])
        .status()
        .is_ok_and(|s| s.success())
    {
        assert!(Instant::now() < deadline, "Ctrl-D did not quit");
        std::thread::sleep(Duration::from_millis(100));
    }
    let history = std::fs::read_dir(cache.path().join("indexes"))
        .expect("index")
        .flatten()
        .next()
        .expect("dir")
        .path()
        .join("chat.json");
    assert!(std::fs::read_to_string(history)
        .expect("history saved")
        .contains("encryption keys"));
}
