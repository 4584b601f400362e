//! `ape-chat watch`: edits and deletes reach the index after the debounce.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::Value;

use crate::common::{self, tiny_model_path, Succeed};

fn ape_chat(cache: &Path) -> Command {
    let mut c = common::ape_chat(cache);
    c.env("APE_CHAT_MODEL", tiny_model_path());
    c
}

/// Kills the watcher even when an assertion fails.
struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn next_update(rx: &Receiver<Value>) -> Value {
    loop {
        let v = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("an update from the watcher");
        if v["type"] == "update" {
            return v;
        }
    }
}

fn cited(cache: &Path, dir: &Path, question: &str) -> Vec<String> {
    let out = ape_chat(cache)
        .args([
            "--ask",
            question,
            "--json",
            "--max-tokens",
            "4",
            "--top-k",
            "2",
        ])
        .arg(dir)
        .succeed();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "sources")
        .and_then(|v| v["sources"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|s| s["path"].as_str().map(String::from))
        .collect()
}

#[test]
fn edits_and_deletes_reach_answers_after_the_debounce() {
    let (cache, dir) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    std::fs::write(
        dir.path().join("birds.md"),
        "# Birds\n\nThe heron waits in shallow water.\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("trains.md"),
        "# Trains\n\nThe night train leaves at ten.\n",
    )
    .expect("write");
    let mut child = ape_chat(cache.path())
        .args(["watch", "--json", "--debounce-ms", "300"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn watcher");
    let stdout = child.stdout.take().expect("stdout");
    let _guard = Watcher(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                let _ = tx.send(v);
            }
        }
    });
    assert_eq!(next_update(&rx)["files_indexed"], 2, "initial index");

    let pelican = dir.path().join("pelican.md");
    std::fs::write(
        &pelican,
        "# Pelican\n\nThe harbour pelican is named Archibald Quuxley.\n",
    )
    .expect("write");
    let u = next_update(&rx);
    assert_eq!(u["files_indexed"], 1, "{u}");
    let q = "What is the harbour pelican named?";
    assert_eq!(
        cited(cache.path(), dir.path(), q)
            .first()
            .map(String::as_str),
        Some("pelican.md")
    );

    std::fs::remove_file(&pelican).expect("rm");
    let u = next_update(&rx);
    assert_eq!(u["files_removed"], 1, "{u}");
    assert!(!cited(cache.path(), dir.path(), q).contains(&"pelican.md".to_string()));
}
