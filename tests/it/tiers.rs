//! Chunk states kept in memory between questions: a repeated question, in
//! the same process, reads nothing from disk and answers exactly as before.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use ape_chat::answer::AskOptions;
use ape_chat::compute::Budget;
use ape_chat::engine::{ApeParams, Engine, EngineOptions, GenerateOptions, Mode, TierOptions};
use ape_chat::index::dense::EmbedOptions;
use ape_chat::index::Retrieval;
use ape_chat::kvstore::KvStore;
use ape_chat::workspace::{FolderOptions, Workspace};

use crate::common::{embed_model_dir, ort_lib, tiny_model_path};

pub(crate) fn engine(tiers: TierOptions) -> Engine {
    let o = EngineOptions {
        threads: 2,
        ctx_tokens: 2048,
        tiers,
        ..EngineOptions::default()
    };
    Engine::load(&tiny_model_path(), o).expect("load")
}

pub(crate) fn open<'e>(engine: &'e Engine, folder: &Path, cache: &Path) -> Workspace<'e> {
    let o = FolderOptions {
        chunk_tokens: 64,
        system_prompt: ape_chat::engine::prompt::DEFAULT_SYSTEM_PROMPT.to_string(),
        prefix_newlines: 0,
        embed: EmbedOptions {
            model_dir: embed_model_dir(),
            ort_lib: Some(ort_lib()),
            threads: 1,
        },
        filters: Default::default(),
        budget_bytes: 1 << 30,
        extraction: Default::default(),
    };
    let mut ws = Workspace::open_in(
        engine,
        folder,
        Some(cache.join("index")),
        &o,
        KvStore::new(cache.join("kv")),
    )
    .expect("open")
    .with_budget(Budget::at(cache.join("locks")));
    ws.refresh_text(&AtomicBool::new(false), &mut |_| {})
        .expect("text stage");
    ws
}

pub(crate) const QUESTION: &str = "How long are nightly snapshots kept?";

pub(crate) fn options() -> AskOptions {
    AskOptions {
        top_k: ape_chat::index::TopK::Best(3),
        files: Vec::new(),
        retrieval: Retrieval::Bm25,
        mode: Mode::Ape(ApeParams::new(0.8, 1.0)),
        whole_mode: None,
        generate: GenerateOptions {
            max_tokens: 12,
            ..GenerateOptions::default()
        },
        max_chunks: None,
    }
}

#[test]
fn a_repeated_question_reads_no_state_from_disk() {
    let sample = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"));
    let cache = tempfile::tempdir().expect("tempdir");
    let e = engine(TierOptions::default());
    let mut ws = open(&e, sample, cache.path());
    let first = ws
        .ask(QUESTION, &[], &options(), &mut |_| true)
        .expect("ask");
    assert_eq!(first.states.encoded, 3, "{:?}", first.states);
    let again = ws
        .ask(QUESTION, &[], &options(), &mut |_| true)
        .expect("ask");
    assert_eq!(
        (
            again.states.from_memory,
            again.states.from_disk,
            again.states.disk_bytes
        ),
        (3, 0, 0),
        "{:?}",
        again.states
    );
    assert_eq!(again.generated.tokens, first.generated.tokens);
    let ram = &e.tier_stats()[0];
    assert_eq!((ram.tier.as_str(), ram.entries), ("ram", 3), "{ram:?}");
    // Between answers nothing leases them: an answer's context may have
    // their memory, and the budget says so.
    let budget = e.memory_budget();
    assert!(ram.reserved_bytes > 0);
    assert_eq!(budget.held_by_states, ram.reserved_bytes, "{budget}");
    // `cache stats` sees this process's tiers.
    let mine = ape_chat::kvstore::live_tiers()
        .into_iter()
        .find(|p| p.pid == std::process::id())
        .expect("published");
    assert_eq!(mine.tiers[0].entries, 3, "{mine:?}");

    // Another process (a fresh engine) has nothing in memory: the same
    // states come from disk, and answer the same.
    let other = engine(TierOptions::default());
    let mut ws = open(&other, sample, cache.path());
    let cold = ws
        .ask(QUESTION, &[], &options(), &mut |_| true)
        .expect("ask");
    assert_eq!((cold.states.from_disk, cold.states.computed()), (3, 0));
    assert!(cold.states.disk_bytes > 3 * 64 * 1000, "{:?}", cold.states);
    assert_eq!(cold.generated.tokens, first.generated.tokens);

    // No memory tier (a zero budget): every question reads the disk.
    let none = engine(TierOptions {
        ram_bytes: Some(0),
        ..TierOptions::default()
    });
    let mut ws = open(&none, sample, cache.path());
    for _ in 0..2 {
        let a = ws
            .ask(QUESTION, &[], &options(), &mut |_| true)
            .expect("ask");
        assert_eq!((a.states.from_disk, a.states.from_memory), (3, 0));
        assert_eq!(a.generated.tokens, first.generated.tokens);
    }
}

/// Runs `ws`'s service until preloading ends; its report.
fn preload(ws: &mut Workspace<'_>) -> ape_chat::workspace::PreloadReport {
    use ape_chat::service::{FolderEvent, Service, ServiceOptions, Until};
    let service = Service::new(
        ServiceOptions {
            until: Until::Shutdown,
            preload: true,
            ..ServiceOptions::indexing(true)
        },
        ws.budget().clone(),
    );
    let handle = service.handle();
    let mut report = None;
    service
        .run(ws, &mut |e| {
            if let FolderEvent::Preloaded(r) = e {
                report = Some(r);
                handle.shutdown();
            }
        })
        .expect("service");
    report.expect("preloading ended")
}

#[test]
fn preloading_fills_free_memory_so_a_first_question_reads_nothing_from_disk() {
    let sample = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"));
    let cache = tempfile::tempdir().expect("tempdir");
    // Every chunk's state on disk, none in this engine's memory (the
    // states stage stores what it encodes; questions keep what they use).
    let indexer = engine(TierOptions::default());
    let mut ws = open(&indexer, sample, cache.path());
    // Through the service: its closing cache check keeps the states of
    // this folder, whose index lies outside the cache dir.
    let r = ape_chat::service::index(&mut ws, true, &mut |_| {}).expect("index");
    assert_eq!(
        (r.states_deferred, r.chunks_encoded),
        (0, r.chunks),
        "{r:?}"
    );
    assert_eq!(r.gc.map(|g| g.unreferenced_removed), Some(0));
    let chunks = ws.index.len();
    assert!(chunks > 6, "{chunks}");
    assert_eq!(indexer.tier_stats()[0].entries, 0);
    // The reference: a fresh engine's first answer, every state from disk.
    let cold = ws
        .ask(QUESTION, &[], &options(), &mut |_| true)
        .expect("ask");
    assert_eq!(
        (cold.states.from_disk, cold.states.computed()),
        (3, 0),
        "{:?}",
        cold.states
    );
    drop(ws);
    // On a CPU build `auto` leaves RAM to the user.
    assert!(!indexer.preloads());

    let preloading = |ram_bytes: Option<u64>| {
        engine(TierOptions {
            ram_bytes,
            preload: ape_chat::engine::Preload::On,
            ..TierOptions::default()
        })
    };
    // Room for everything: every state loaded, the first question reads
    // nothing from disk and answers as the cold one did.
    let e = preloading(None);
    assert!(e.preloads());
    let mut ws = open(&e, sample, cache.path());
    let r = preload(&mut ws);
    assert_eq!((r.loaded, r.held, r.full), (chunks, 0, false), "{r:?}");
    assert!(r.bytes > 0);
    assert_eq!(e.tier_stats()[0].entries, chunks);
    let first = ws
        .ask(QUESTION, &[], &options(), &mut |_| true)
        .expect("ask");
    assert_eq!(
        (first.states.from_memory, first.states.from_disk),
        (3, 0),
        "{:?}",
        first.states
    );
    assert_eq!(first.generated.tokens, cold.generated.tokens);
    let per_state = e.tier_stats()[0].used_bytes / chunks as u64;
    drop(ws);

    // Room for about four states: a question's three are kept first, then
    // preloading fills the rest of the room and stops, evicting none.
    let small = preloading(Some(per_state * 9 / 2));
    let mut ws = open(&small, sample, cache.path());
    let asked = ws
        .ask(QUESTION, &[], &options(), &mut |_| true)
        .expect("ask");
    assert_eq!(asked.states.from_disk, 3);
    let r = preload(&mut ws);
    assert!(r.full && r.held <= 3 && r.loaded < chunks - 3, "{r:?}");
    let ram = &small.tier_stats()[0];
    assert_eq!((ram.entries, ram.evictions), (3 + r.loaded, 0), "{ram:?}");
    let again = ws
        .ask(QUESTION, &[], &options(), &mut |_| true)
        .expect("ask");
    assert_eq!((again.states.from_memory, again.states.from_disk), (3, 0));
    assert_eq!(again.generated.tokens, cold.generated.tokens);
}
