//! `ape-chat doctor`: can APE be trusted on this model? Reports the model's
//! facts and runs the engine's exactness and APE-math checks on it.

use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use super::style::{bold, dim, mark};
use super::ModelArgs;
use crate::engine::check::{
    self, ApeMathReport, EchoReport, ExactnessReport, PlacementReport, RecomputeReport,
    SAMPLE_CHUNKS, SAMPLE_QUESTION,
};
use crate::engine::prompt::Template;
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{ApeParams, EditPath, Engine, Mode, ModelInfo, Preload, PromptLayout};
use crate::kvstore::KvStore;
use crate::states::States;
use crate::statestore::{SharedStore, StoreCheck};

/// Exactness tolerance (the engine reaches 0 on CPU; 1e-4 allows other backends).
const EXACT_TOL: f32 = 1e-4;
/// A gapped recomputation decodes other batch shapes than sequential
/// prefill: rounding may differ (none did on the tiny model, on CPU).
const GAPPED_TOL: f32 = 1e-3;
/// APE attention weights must match the f64 reference this closely.
const MATH_TOL: f64 = 1e-5;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print one JSON object instead of the report.
    #[arg(long)]
    json: bool,
    /// Greedy steps compared in the exactness check.
    #[arg(long, default_value_t = 20, value_name = "N")]
    steps: usize,
    /// Also check this shared state store: reachable, writable, one real
    /// chunk state written, read back and checked, and how long each took.
    #[arg(
        long,
        env = "APE_CHAT_STATE_STORE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub(super) state_store: Option<String>,
}

#[derive(Serialize)]
struct Report {
    model: String,
    info: ModelInfo,
    ape_supported: bool,
    ape_unsupported_reason: Option<String>,
    /// Answer modes this model can use (the others fall back to sequential).
    modes: Vec<&'static str>,
    /// How prompts are laid out: the model's chat template, or plain text
    /// (and why).
    template: String,
    exactness: Option<Outcome<ExactnessReport>>,
    /// APE inside llama.cpp's softmax, as answers use it.
    ape_math: Option<Outcome<ApeMathReport>>,
    /// APE in the eval callback, as focus uses it.
    ape_math_callback: Option<Outcome<ApeMathReport>>,
    /// States written into the KV tensors vs llama.cpp's restore.
    placement: Option<Outcome<PlacementReport>>,
    /// An echoed window vs llama.cpp's own read of it, moved.
    echo: Option<Outcome<EchoReport>>,
    /// Selective recomputation vs sequential prefill.
    recompute: Option<Outcome<RecomputeReport>>,
    memory: Memory,
    /// The shared state store, when one is configured.
    state_store: Option<Outcome<StoreCheck>>,
    ok: bool,
}

/// Where chunk states are kept between questions on this machine, and
/// what the `preload` setting comes to here (`auto` keys on the first
/// tier being GPU memory, which only a loaded model can tell).
#[derive(Serialize)]
struct Memory {
    /// Fastest first.
    tiers: Vec<TierBudget>,
    preload: Preload,
    /// Whether the TUI and `serve` load a folder's stored states into
    /// these tiers once it is indexed.
    preloads: bool,
}

#[derive(Serialize)]
struct TierBudget {
    tier: String,
    budget_bytes: u64,
}

#[derive(Serialize)]
struct Outcome<T> {
    passed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub fn run(model: &ModelArgs, args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let engine = model.load(4096)?;
    let support = engine.info().ape_support();
    let layout = PromptLayout::new(&engine, DEFAULT_SYSTEM_PROMPT)?;
    let template = match &layout.template {
        Template::Model => "the model's chat template".to_string(),
        Template::Plain(None) => "plain text (the model has no chat template)".to_string(),
        Template::Plain(Some(why)) => {
            format!("plain text (llama.cpp cannot apply the model's chat template: {why})")
        }
    };
    let modes = if support.is_ok() {
        vec![
            Mode::Sequential,
            Mode::Pcw,
            Mode::Parallel,
            Mode::Ape(ApeParams::default()),
        ]
    } else {
        vec![Mode::Sequential]
    };
    let modes = modes.iter().map(Mode::name).collect();
    let checked = support.is_ok();
    let exactness = checked.then(|| exactness(&engine, &layout, args.steps));
    let ape_math_callback = checked.then(|| ape_math(&engine, &layout, EditPath::Callback));
    let ape_math = checked.then(|| ape_math(&engine, &layout, EditPath::Softmax));
    let placement = checked.then(|| placement(&engine, &layout, args.steps));
    let echo = checked.then(|| echo(&engine, &layout, args.steps));
    let recompute = checked.then(|| recompute(&engine, &layout, args.steps));
    let memory = memory(&engine);
    let state_store = args
        .state_store
        .as_deref()
        .filter(|u| !u.is_empty())
        .map(|url| store_check(&engine, &layout, url));
    let ok = checked
        && passed(&exactness)
        && passed(&ape_math)
        && passed(&ape_math_callback)
        && passed(&placement)
        && passed(&echo)
        && passed(&recompute);
    let report = Report {
        model: engine.path().display().to_string(),
        info: engine.info().clone(),
        ape_supported: support.is_ok(),
        ape_unsupported_reason: support.err(),
        modes,
        template,
        exactness,
        ape_math,
        ape_math_callback,
        placement,
        echo,
        recompute,
        memory,
        state_store,
        ok,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    let store_ok = report.state_store.as_ref().is_none_or(|o| o.passed);
    Ok(if ok && store_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// One real chunk state (the sample chunk's, encoded here into a scratch
/// cache) through the shared store and back, checked as a fetched state is.
fn store_check(engine: &Engine, layout: &PromptLayout, url: &str) -> Outcome<StoreCheck> {
    let fail = |e: String| Outcome {
        passed: false,
        result: None,
        error: Some(e),
    };
    let shared = match SharedStore::open(url) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    let state = (|| -> Result<Vec<u8>, String> {
        let scratch = tempfile_dir().map_err(|e| e.to_string())?;
        let states = States::new(engine, layout.clone(), KvStore::new(scratch.path()))
            .map_err(|e| e.to_string())?;
        let mut session = engine.session().map_err(|e| e.to_string())?;
        let tokens = states.chunk_tokens(SAMPLE_CHUNKS[1]);
        let (_, stored) = states
            .encode(&mut session, &tokens, false)
            .map_err(|e| e.to_string())?;
        let key = stored.map_err(|e| e.to_string())?;
        std::fs::read(states.store.path(&key)).map_err(|e| e.to_string())
    })();
    let state = match state {
        Ok(s) => s,
        Err(e) => return fail(format!("could not encode the sample state: {e}")),
    };
    match shared.check(&state) {
        Ok(c) => Outcome {
            passed: true,
            result: Some(c),
            error: None,
        },
        Err(e) => fail(e.to_string()),
    }
}

/// A scratch directory removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempfile_dir() -> std::io::Result<Scratch> {
    let dir = std::env::temp_dir().join(format!("ape-chat-doctor-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(Scratch(dir))
}

fn exactness(engine: &Engine, layout: &PromptLayout, steps: usize) -> Outcome<ExactnessReport> {
    match check::exactness(engine, layout, SAMPLE_CHUNKS[1], SAMPLE_QUESTION, steps) {
        Ok(r) => Outcome {
            passed: r.parallel_vs_sequential <= EXACT_TOL
                && r.ape_identity_vs_parallel <= EXACT_TOL
                && r.ape_identity_callback_vs_parallel <= EXACT_TOL
                && r.pcw_vs_live <= EXACT_TOL
                && r.pcw_vs_parallel > EXACT_TOL,
            result: Some(r),
            error: None,
        },
        Err(e) => failed(e),
    }
}

fn ape_math(engine: &Engine, layout: &PromptLayout, path: EditPath) -> Outcome<ApeMathReport> {
    let params = ApeParams::new(0.6, 0.7);
    match check::ape_math(
        engine,
        layout,
        &SAMPLE_CHUNKS,
        SAMPLE_QUESTION,
        params,
        4,
        path,
    ) {
        Ok(r) => Outcome {
            passed: r.max_abs_error <= MATH_TOL
                && r.layout_errors == 0
                && r.layers == engine.info().n_layer as usize,
            result: Some(r),
            error: None,
        },
        Err(e) => failed(e),
    }
}

fn placement(engine: &Engine, layout: &PromptLayout, steps: usize) -> Outcome<PlacementReport> {
    let params = ApeParams::new(0.6, 0.7);
    match check::placement(
        engine,
        layout,
        &SAMPLE_CHUNKS,
        SAMPLE_QUESTION,
        params,
        steps,
    ) {
        Ok(r) => Outcome {
            passed: r.max_abs_diff <= EXACT_TOL,
            result: Some(r),
            error: None,
        },
        Err(e) => failed(e),
    }
}

/// The echo `balanced` reads its best chunk with: bit for bit what
/// llama.cpp makes of the chunk moved by its own position shift, and its
/// K what the chunk read at those positions has, to rounding (a tenth of
/// what no shift gives). A model or cache that cannot echo (a quantized K,
/// positions that cannot shift) passes: its answers prefill the chunk.
fn echo(engine: &Engine, layout: &PromptLayout, steps: usize) -> Outcome<EchoReport> {
    let params = ApeParams::new(0.8, 0.8);
    let r = check::echo(
        engine,
        layout,
        &SAMPLE_CHUNKS,
        SAMPLE_QUESTION,
        params,
        None,
        steps,
    );
    where_cells_move(r, |r| {
        r.echo_vs_moved <= EXACT_TOL
            && r.none_vs_echo > EXACT_TOL
            && r.k_echo_vs_live * 10.0 < r.k_unshifted_vs_live
    })
}

/// Selective recomputation: every token recomputed is sequential prefill
/// bit for bit; every token whose cached state is not sequential's,
/// recomputed in one gapped decode, is to rounding; none is not. A model or
/// cache whose states cannot move passes: its recomputation answers with
/// sequential prefill.
fn recompute(engine: &Engine, layout: &PromptLayout, steps: usize) -> Outcome<RecomputeReport> {
    let r = check::recomputation(engine, layout, &SAMPLE_CHUNKS, SAMPLE_QUESTION, steps);
    where_cells_move(r, |r| {
        r.full_vs_sequential <= EXACT_TOL
            && r.gapped_vs_sequential <= GAPPED_TOL
            && r.none_vs_sequential > GAPPED_TOL
    })
}

/// The outcome of a check of cached cells moved to other positions (the
/// echo, recomputation): judged by `ok`, or passed where cells cannot move
/// here, since answers then prefill instead.
fn where_cells_move<T>(
    r: Result<T, crate::engine::EngineError>,
    ok: impl Fn(&T) -> bool,
) -> Outcome<T> {
    match r {
        Ok(r) => Outcome {
            passed: ok(&r),
            result: Some(r),
            error: None,
        },
        Err(crate::engine::EngineError::EchoUnsupported(why)) => Outcome {
            passed: true,
            result: None,
            error: Some(format!("not used here: {why}")),
        },
        Err(e) => failed(e),
    }
}

fn memory(engine: &Engine) -> Memory {
    // The tiers are made with the first context; the checks above made
    // one unless APE is unsupported (where no context means no tiers).
    if engine.tier_names().is_empty() {
        drop(engine.session());
    }
    Memory {
        tiers: engine
            .tier_stats()
            .into_iter()
            .map(|t| TierBudget {
                tier: t.tier,
                budget_bytes: t.budget_bytes,
            })
            .collect(),
        preload: engine.options().tiers.preload,
        preloads: engine.preloads(),
    }
}

fn passed<T>(o: &Option<Outcome<T>>) -> bool {
    o.as_ref().is_some_and(|o| o.passed)
}

fn failed<T>(e: crate::engine::EngineError) -> Outcome<T> {
    Outcome {
        passed: false,
        result: None,
        error: Some(e.to_string()),
    }
}

fn print_report(r: &Report) {
    let i = &r.info;
    println!("{}  {}", bold("model"), r.model);
    let name = i.name.as_deref().unwrap_or("?");
    println!(
        "  {name} · {} · {:.0} M params · {:.1} MiB",
        i.architecture,
        i.n_params as f64 / 1e6,
        i.file_bytes as f64 / 1048576.0
    );
    println!(
        "  {} layers · {} heads / {} KV heads · head dim {} · trained context {}",
        i.n_layer, i.n_head, i.n_head_kv, i.head_dim, i.n_ctx_train
    );
    println!(
        "  prompt layout: {} · identity {}",
        r.template,
        dim(&i.id.short())
    );
    println!();
    match &r.ape_unsupported_reason {
        None => println!(
            "{} APE supported (plain causal attention, softmax scale 1/√{})",
            mark(true),
            i.head_dim
        ),
        Some(why) => println!("{} APE not supported: {why}", mark(false)),
    }
    println!(
        "  modes: {}{}",
        r.modes.join(", "),
        if r.modes.len() == 1 {
            dim(" (pcw, parallel and ape answers fall back to sequential prefill, with a note)")
        } else {
            String::new()
        }
    );
    if let Some(o) = &r.exactness {
        match (&o.result, &o.error) {
            (Some(x), _) => {
                println!(
                    "{} exactness over {} steps: parallel vs sequential max |Δlogit| = {:e}, APE(T=S=1) vs parallel = {:e} (softmax), {:e} (callback)",
                    mark(o.passed), x.steps, x.parallel_vs_sequential, x.ape_identity_vs_parallel, x.ape_identity_callback_vs_parallel
                );
                println!(
                    "  PCW (chunk encoded without the prefix) vs the same computed live: {:e}; vs parallel: {:.3} (the shared prefix's effect)",
                    x.pcw_vs_live, x.pcw_vs_parallel
                );
            }
            (_, Some(e)) => println!("{} exactness check failed: {e}", mark(false)),
            _ => {}
        }
    }
    for o in [&r.ape_math, &r.ape_math_callback].into_iter().flatten() {
        match (&o.result, &o.error) {
            (Some(x), _) => {
                println!(
                    "{} APE attention in {} (T={}, S={}, {} chunks) vs f64 reference: max |Δp| = {:.1e} over {} rows in {} layers, {} layout errors",
                    mark(o.passed), x.path, x.params.temperature, x.params.scale, x.chunks, x.max_abs_error, x.rows, x.layers, x.layout_errors
                );
                if let Some(d) = &x.device {
                    println!("  attention lives in GPU memory; the callback's work ran {d}");
                }
            }
            (_, Some(e)) => println!("{} APE attention check failed: {e}", mark(false)),
            _ => {}
        }
    }
    if let Some(o) = &r.placement {
        match (&o.result, &o.error) {
            (Some(x), _) => println!(
                "{} states written into the KV cache vs llama.cpp's restore: max |Δlogit| = {:e} over {} cases of {} steps",
                mark(o.passed),
                x.max_abs_diff,
                x.cases.len(),
                x.steps
            ),
            (_, Some(e)) => println!("{} placement check failed: {e}", mark(false)),
            _ => {}
        }
    }
    if let Some(o) = &r.echo {
        match (&o.result, &o.error) {
            (Some(x), _) => {
                println!(
                    "{} the best chunk echoed (its {} cached cells moved before the question) vs llama.cpp's own read of it moved there: max |Δlogit| = {:e} over {} steps",
                    mark(o.passed),
                    x.window.len(),
                    x.echo_vs_moved,
                    x.steps
                );
                println!(
                    "  its K vs the chunk read at those positions: {:.1e} of the largest (left unshifted: {:.2})",
                    x.k_echo_vs_live, x.k_unshifted_vs_live
                );
            }
            (_, Some(e)) => println!("{} echo: {e}", mark(o.passed)),
            _ => {}
        }
    }
    if let Some(o) = &r.recompute {
        match (&o.result, &o.error) {
            (Some(x), _) => {
                println!(
                    "{} selective recomputation vs sequential prefill over {} chunk tokens: every token {:e}, every token not already sequential's (gapped) {:e}, none {:.2} (max |Δlogit| over {} steps)",
                    mark(o.passed),
                    x.tokens,
                    x.full_vs_sequential,
                    x.gapped_vs_sequential,
                    x.none_vs_sequential,
                    x.steps
                );
            }
            (_, Some(e)) => println!("{} recomputation: {e}", mark(o.passed)),
            _ => {}
        }
    }
    print_memory(&r.memory);
    if let Some(o) = &r.state_store {
        println!();
        match (&o.result, &o.error) {
            (Some(c), _) => println!(
                "{}  {} {}: reachable in {:.1} ms, PING {:.1} ms, one chunk state ({:.1} MB) written, read back and checked in {:.1} ms",
                bold("state store"),
                mark(true),
                c.url,
                c.connect_ms,
                c.ping_ms,
                c.round_trip_bytes as f64 / 1e6,
                c.round_trip_ms
            ),
            (_, Some(e)) => println!("{}  {} {e}", bold("state store"), mark(false)),
            _ => {}
        }
    }
    println!();
    if r.ok {
        println!("{} APE is safe on this model", mark(true));
    } else {
        println!(
            "{} APE is NOT safe on this model: use --mode sequential",
            mark(false)
        );
    }
}

fn print_memory(m: &Memory) {
    let tiers: Vec<String> = m
        .tiers
        .iter()
        .map(|t| format!("{} {:.1} GB", t.tier, t.budget_bytes as f64 / 1e9))
        .collect();
    println!();
    if tiers.is_empty() {
        println!(
            "{}  no memory tier: chunk states are read from disk",
            bold("memory")
        );
    } else {
        println!(
            "{}  chunk states kept between questions in {}",
            bold("memory"),
            tiers.join(", then ")
        );
    }
    let why = match (m.preload, m.preloads) {
        (Preload::Auto, true) => " (auto: the KV cache is in GPU memory)",
        (Preload::Auto, false) => {
            " (auto: only when the KV cache is in GPU memory; --preload on to force)"
        }
        _ => "",
    };
    println!(
        "  a folder's stored states preloaded once indexed (TUI, serve): {}{}",
        if m.preloads { "yes" } else { "no" },
        dim(why)
    );
}
