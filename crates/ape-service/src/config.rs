//! Settings in layers: built-in defaults → TOML file → `APE_CHAT_*`
//! environment variables → command-line flags. The CLI parses flags and env
//! (clap), then fills what is still unset from the file; built-in defaults
//! apply last. The file lives in the platform config dir
//! (`~/.config/ape-chat/config.toml` on Linux; `APE_CHAT_CONFIG` overrides)
//! and is written, fully commented, on first run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::engine::{ApeParams, Mode};

/// The TOML file's settings; every key is optional.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FileConfig {
    /// Folders you chat with; the first is used when no DIR is given.
    pub folders: Vec<PathBuf>,
    pub model: Option<PathBuf>,
    pub embed_model: Option<PathBuf>,
    pub ort_lib: Option<PathBuf>,
    /// APE's settings at the top level (`temperature_ape = 0.8`, …). Not a
    /// flattened [`ModelConfig`]: serde cannot refuse unknown keys through
    /// two levels of flattening.
    #[serde(flatten)]
    pub ape: ApeSettings,
    pub prefix_newlines: Option<usize>,
    pub system_prompt: Option<String>,
    pub chunk_tokens: Option<usize>,
    pub top_k: Option<crate::index::TopK>,
    /// Most chunks one `serve` request may read (its `top_k`, `"all"` and
    /// `files` together); the memory budget stays the hard cap.
    pub max_request_chunks: Option<usize>,
    /// What `balanced` sets above its preset ([`Quality::modes`]):
    /// this file's APE settings over the model's shipped `balanced` ones.
    /// Filled by [`Self::for_model`], never read from the file.
    #[serde(skip)]
    pub balanced: ApeSettings,
    /// Only index files matching these globs (gitignore syntax); `--include`
    /// flags replace them.
    pub include: Vec<String>,
    /// Skip files matching these globs; `--exclude` flags replace them.
    pub exclude: Vec<String>,
    pub quality: Option<Quality>,
    pub cache_budget_gb: Option<f64>,
    /// A shared store of chunk states (`--state-store`).
    pub state_store: Option<String>,
    pub memory_budget_gb: Option<f64>,
    pub preload: Option<crate::engine::Preload>,
    pub threads: Option<usize>,
    pub gpu_layers: Option<u32>,
    /// Per-model APE settings (written by `ape-chat calibrate`), keyed by
    /// the model's identity: they beat the top-level values for that model.
    pub models: BTreeMap<String, ModelConfig>,
}

/// APE's settings, named once: the same struct is the command-line flags
/// (with their environment variables), the config file's keys (top level
/// and per model), the shipped settings and what `calibrate` saves. A
/// field left `None` falls through to the layer below ([`Self::over`]),
/// then to [`ApeParams::DEFAULT`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, serde::Serialize, clap::Args)]
#[serde(default)]
pub struct ApeSettings {
    /// APE attention temperature T for chunk tokens [default: 0.9, or what
    /// is calibrated for the model].
    #[arg(
        long = "temperature-ape",
        env = "APE_CHAT_TEMPERATURE_APE",
        value_name = "T"
    )]
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "shortest_opt"
    )]
    pub temperature_ape: Option<f32>,
    /// APE scaling factor S of the chunks' attention mass [default: 0.9].
    #[arg(long = "scale-ape", env = "APE_CHAT_SCALE_APE", value_name = "S")]
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "shortest_opt"
    )]
    pub scale_ape: Option<f32>,
    /// Re-read the N best chunks sequentially before the question (costs
    /// their prefill) [default: 0, or what is shipped for the model].
    #[arg(long, env = "APE_CHAT_REREAD", value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reread: Option<u32>,
    /// Re-read only the best N-token window of each re-read chunk, keeping
    /// the whole chunk in the parallel block [default: 0 = whole chunks].
    #[arg(long, env = "APE_CHAT_REREAD_WINDOW", value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reread_window: Option<u32>,
    /// Make the re-read window whole sentences, as many as fit in its N
    /// tokens (`--reread-sentences=false`: any run of N tokens).
    #[arg(
        long,
        env = "APE_CHAT_REREAD_SENTENCES",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reread_sentences: Option<bool>,
    /// Echo the re-read text from its cached cells, moved right before the
    /// question, instead of prefilling it: no prefill, the chunk stays in
    /// the parallel block (`--reread-echo=false`: prefill it).
    #[arg(
        long,
        env = "APE_CHAT_REREAD_ECHO",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reread_echo: Option<bool>,
    /// Each attention row keeps only its N strongest chunks [default: 0 = all].
    #[arg(long, env = "APE_CHAT_FOCUS", value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus: Option<u32>,
    /// Begin the answer again with sequential prefill when its first tokens'
    /// mean log-probability is below this (e.g. -0.5) [default: never].
    #[arg(
        long,
        env = "APE_CHAT_DOUBT",
        value_name = "LOGPROB",
        allow_hyphen_values = true
    )]
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "shortest_opt"
    )]
    pub doubt: Option<f32>,
    /// Selective recomputation instead of APE: the cached states moved to
    /// sequential prefill's layout and this percentage of their tokens, the
    /// ones the question attends to most, decoded again (100: sequential
    /// prefill) [default: off].
    #[arg(long, env = "APE_CHAT_RECOMPUTE", value_name = "PERCENT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recompute: Option<u8>,
}

impl ApeSettings {
    /// `self` where set, else `below`: the one place these settings layer.
    pub fn over(self, below: ApeSettings) -> ApeSettings {
        ApeSettings {
            temperature_ape: self.temperature_ape.or(below.temperature_ape),
            scale_ape: self.scale_ape.or(below.scale_ape),
            reread: self.reread.or(below.reread),
            reread_window: self.reread_window.or(below.reread_window),
            reread_sentences: self.reread_sentences.or(below.reread_sentences),
            reread_echo: self.reread_echo.or(below.reread_echo),
            focus: self.focus.or(below.focus),
            doubt: self.doubt.or(below.doubt),
            recompute: self.recompute.or(below.recompute),
        }
    }

    /// The engine's parameters: what is set, the defaults for the rest.
    pub fn params(&self) -> Result<ApeParams, ConfigError> {
        let d = ApeParams::DEFAULT;
        let p = ApeParams {
            temperature: self.temperature_ape.unwrap_or(d.temperature),
            scale: self.scale_ape.unwrap_or(d.scale),
            reread: self.reread.unwrap_or(d.reread),
            window: self.reread_window.unwrap_or(d.window),
            sentences: self.reread_sentences.unwrap_or(d.sentences),
            echo: self.reread_echo.unwrap_or(d.echo),
            focus: self.focus.unwrap_or(d.focus),
            doubt: self.doubt.or(d.doubt),
            recompute: self.recompute.or(d.recompute),
        };
        p.validate().map_err(ConfigError::Setting)?;
        Ok(p)
    }
}

/// What may be set per model: APE's settings and the prefix padding (both
/// found by `calibrate`).
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    #[serde(flatten)]
    pub ape: ApeSettings,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_newlines: Option<usize>,
}

impl ModelConfig {
    /// `self` where set, else `below`.
    fn over(self, below: ModelConfig) -> ModelConfig {
        ModelConfig {
            ape: self.ape.over(below.ape),
            prefix_newlines: self.prefix_newlines.or(below.prefix_newlines),
        }
    }

    /// Whether the setting whose key is `key` has a value here.
    pub fn has(&self, key: &str) -> bool {
        serde_json::to_value(self)
            .ok()
            .is_some_and(|v| v.get(key).is_some())
    }
}

/// `shortest` for optional settings (0.8, not 0.800000011920929, in files).
fn shortest_opt<S: serde::Serializer>(x: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => crate::numfmt::shortest(x, s),
        None => s.serialize_none(),
    }
}

/// Settings measured for the models `scripts/setup.sh` installs, shipped
/// with ape-chat (`assets/calibrated.json`): what a new user gets without
/// running `calibrate`.
#[derive(Clone, Debug, Deserialize)]
struct Shipped {
    settings: ModelConfig,
    /// What `--quality balanced` sets over `settings` for this model (its
    /// point on the frontier), where it was measured.
    #[serde(default)]
    balanced: ApeSettings,
}

fn shipped_for(id: &str) -> Option<&'static Shipped> {
    static SHIPPED: std::sync::OnceLock<BTreeMap<String, Shipped>> = std::sync::OnceLock::new();
    SHIPPED
        .get_or_init(|| serde_json::from_str(SHIPPED_JSON).unwrap_or_default())
        .get(id)
}

/// The shipped settings for the model with identity `id`, if any.
pub fn shipped(id: &str) -> Option<ModelConfig> {
    shipped_for(id).map(|s| s.settings)
}

/// `balanced`'s shipped settings for the model with identity `id` (none
/// set where none was measured).
pub fn shipped_balanced(id: &str) -> ApeSettings {
    shipped_for(id).map(|s| s.balanced).unwrap_or_default()
}

/// `assets/calibrated.json`, compiled in.
pub const SHIPPED_JSON: &str = include_str!("../../../assets/calibrated.json");

impl FileConfig {
    /// [`Self::for_model`] for the model file at `path`, and that model's
    /// identity (`None` when the file cannot be read: no model settings).
    pub fn for_model_file(&self, path: &std::path::Path) -> (FileConfig, Option<String>) {
        let id = crate::engine::ModelId::of_file(path)
            .ok()
            .map(|id| id.to_string());
        (self.for_model(id.as_deref()), id)
    }

    /// `flags` (and their environment) over this file's APE settings: for
    /// every quality, and what `balanced` sets above its preset (see
    /// [`Quality::modes`]), in that order.
    pub fn ape_layers(&self, flags: ApeSettings) -> (ApeSettings, ApeSettings) {
        (flags.over(self.ape), flags.over(self.balanced))
    }

    /// These settings as they apply to the model with identity `id`, in
    /// layers: shipped settings for the model < top-level values < the
    /// model's own `[models."<id>"]` table; `balanced` has the model's
    /// shipped `balanced` settings at the bottom instead.
    pub fn for_model(&self, id: Option<&str>) -> FileConfig {
        let own = id
            .and_then(|id| self.models.get(id))
            .copied()
            .unwrap_or_default();
        let top = ModelConfig {
            ape: self.ape,
            prefix_newlines: self.prefix_newlines,
        };
        let user = own.over(top);
        let m = user.over(id.and_then(shipped).unwrap_or_default());
        FileConfig {
            ape: m.ape,
            balanced: user.ape.over(id.map(shipped_balanced).unwrap_or_default()),
            prefix_newlines: m.prefix_newlines,
            ..self.clone()
        }
    }
}

/// A config file that exists but cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// A setting out of its range (from a flag, the environment or the file).
    #[error("{0}")]
    Setting(String),
}

/// Where the config file is read from.
pub fn path() -> PathBuf {
    if let Some(p) = std::env::var_os("APE_CHAT_CONFIG") {
        return PathBuf::from(p);
    }
    directories::ProjectDirs::from("", "", "ape-chat")
        .map(|d| d.config_dir().join("config.toml"))
        .unwrap_or_else(|| PathBuf::from("ape-chat.toml"))
}

/// Loads the config file, writing the commented template if there is none
/// (best effort: a read-only home just means no file).
pub fn load() -> Result<FileConfig, ConfigError> {
    load_from(&path())
}

/// [`load`] for an explicit path.
pub fn load_from(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let _ = crate::fsutil::write_atomic(path, &[TEMPLATE.as_bytes()]);
            return Ok(FileConfig::default());
        }
        Err(error) => {
            return Err(ConfigError::Io {
                path: path.to_owned(),
                error,
            })
        }
    };
    toml::from_str(&text).map_err(|e| ConfigError::Invalid {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// Writes `settings` into the `[models."<id>"]` table of the file at
/// `path`, keeping everything else in it (comments included) as it was;
/// `note` becomes the table's comment. Atomic.
pub fn save_model(
    path: &Path,
    id: &str,
    settings: ModelConfig,
    note: &str,
) -> Result<(), ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => TEMPLATE.to_string(),
        Err(error) => {
            return Err(ConfigError::Io {
                path: path.to_owned(),
                error,
            })
        }
    };
    let invalid = |message: String| ConfigError::Invalid {
        path: path.to_owned(),
        message,
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| invalid(format!("{e}")))?;
    if let Some(models) = doc.get_mut("models") {
        models
            .as_table_like_mut()
            .ok_or_else(|| invalid("`models` is not a table".into()))?
            .remove(id);
    }
    // Appended as text: a file of only comments keeps them in the
    // document's trailing decor, which an inserted table would jump ahead of.
    let table = toml::to_string(&settings).map_err(|e| invalid(e.to_string()))?;
    let note: String = note.lines().map(|l| format!("# {l}\n")).collect();
    let mut text = doc.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "\n{note}[models.{}]\n{table}",
        toml_edit::Key::new(id)
    ));
    // Never write a file that would not load back.
    toml::from_str::<FileConfig>(&text).map_err(|e| invalid(e.to_string()))?;
    crate::fsutil::write_atomic(path, &[text.as_bytes()]).map_err(|error| ConfigError::Io {
        path: path.to_owned(),
        error,
    })
}

/// The file written on first run: every setting, commented out, with its
/// default and the environment variable that overrides it.
pub const TEMPLATE: &str = r#"# ape-chat configuration. Precedence: built-in defaults < this file <
# APE_CHAT_* environment variables < command-line flags.

# Folders you chat with; the first is used when no DIR is given.
# folders = ["~/docs"]

# Chat model (GGUF). Default: the model installed by scripts/setup.sh.  [APE_CHAT_MODEL]
# model = "/path/to/model.gguf"

# Sentence-embedding model directory and ONNX Runtime library.  [APE_CHAT_EMBED_MODEL, ORT_DYLIB_PATH]
# embed_model = "/path/to/all-MiniLM-L6-v2"
# ort_lib = "/path/to/libonnxruntime.so"

# APE attention temperature T and scale S. Unset, a model gets what is
# calibrated for it; "balanced" may ship its own S per model (0.8 on the
# 0.5B model, with its echo); a value set here wins over both.
# [APE_CHAT_TEMPERATURE_APE, APE_CHAT_SCALE_APE]
# temperature_ape = 0.9
# scale_ape = 0.9

# Refinements of APE for small models: re-read the N best chunks
# sequentially before the question (only their best reread_window tokens
# when set, 0 = whole chunks; in whole sentences when reread_sentences);
# let each attention row keep only its N strongest chunks (0 = off).
# Unset, "balanced" re-reads the best chunk whole, echoed (below; by
# prefill on a GPU and with --file).
# [APE_CHAT_REREAD, APE_CHAT_REREAD_WINDOW, APE_CHAT_REREAD_SENTENCES, APE_CHAT_FOCUS]
# reread = 0
# reread_window = 0
# reread_sentences = false
# focus = 0

# Echo the re-read text from its cached states instead of prefilling it:
# its cells are copied right before the question and moved to those
# positions, so it costs no prefill. Unset, "balanced" echoes.  [APE_CHAT_REREAD_ECHO]
# reread_echo = false

# Doubt: when the answer's first tokens from cached states have a mean
# log-probability below this, begin again with sequential prefill (only
# those answers pay for it). Unset: never.  [APE_CHAT_DOUBT]
# doubt = -0.5

# Selective recomputation instead of APE: the cached states moved to
# sequential prefill's layout and this percentage of their tokens (those the
# question attends to most) decoded again; 100 is sequential prefill.
# Unset: off.  [APE_CHAT_RECOMPUTE]
# recompute = 20

# Newline tokens appended to the shared prefix before the chunks (a longer
# prefix can steady APE; changing it re-encodes the cache).  [APE_CHAT_PREFIX_NEWLINES]
# prefix_newlines = 0

# System prompt: part of the shared prefix every chunk state is encoded
# after; changing it re-encodes the cache.  [APE_CHAT_SYSTEM_PROMPT]
# system_prompt = "You are a helpful assistant. ..."

# Speed against faithfulness: "fast" (APE), "balanced" (APE and the best
# sentences of the best chunk re-read before the question), "exact"
# (sequential prefill).  [APE_CHAT_QUALITY]
# quality = "balanced"

# Chunk size in model tokens, and chunks read per question: a number, or
# "all" for every chunk of the folder (fast and balanced read past the
# model's window; memory is the limit).  [APE_CHAT_CHUNK_TOKENS, APE_CHAT_TOP_K]
# chunk_tokens = 256
# top_k = 5

# Which files to index beyond .gitignore and .ignore (gitignore-style globs,
# relative to the folder); --include / --exclude flags replace these.
# include = ["*.md", "docs/**"]
# exclude = ["drafts/", "*.log"]

# KV-state cache budget in GB (least recently used states are evicted).  [APE_CHAT_CACHE_BUDGET_GB]
# cache_budget_gb = 20.0

# A team's shared store of chunk states, behind this machine's cache: states
# missing here are read from it, states encoded here are offered to it.  [APE_CHAT_STATE_STORE]
# state_store = "redis://127.0.0.1:6379/0"

# Most chunks one `serve` request may read (top_k, "all" and files together).
# max_request_chunks = 256

# Memory in GB an answer's context (KV cells and attention scratch) may
# take; by default what is free when the answer starts (RAM, or the GPU's
# memory when layers are offloaded).  [APE_CHAT_MEMORY_BUDGET_GB]
# memory_budget_gb = 8.0

# Load the folder's cached chunk states into memory once it is indexed (TUI
# and server; only free room, nothing evicted), so that first questions read
# nothing from disk: "auto" does when the KV cache is on a GPU, "on", "off".  [APE_CHAT_PRELOAD]
# preload = "auto"

# CPU threads and GPU layers (CUDA builds).  [APE_CHAT_THREADS, APE_CHAT_GPU_LAYERS]
# threads = 4
# gpu_layers = 0

# Per-model settings found by `ape-chat calibrate` follow, one table per
# model identity; they beat the values above for that model.
"#;

/// Speed against faithfulness to sequential prefill, as a user chooses it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quality {
    /// APE over cached states: the fastest answer.
    Fast,
    /// APE, and the best-ranked chunk echoed right before the question: its
    /// cached cells copied there, no prefill ([`ApeParams::echo`]); the
    /// best chunk re-read whole by prefill over named files, and on a GPU
    /// while that is cheap there ([`WHOLE_REREAD_BUDGET`](crate::answer::WHOLE_REREAD_BUDGET)).
    #[default]
    Balanced,
    /// Sequential prefill of every chunk: the baseline, slowest.
    Exact,
}

impl Quality {
    /// `balanced`, for what the user's settings and the model's shipped
    /// `balanced` ones leave unset: APE with the best-ranked chunk echoed
    /// whole before the question. Chosen on the real-documents tune half
    /// (docs/results.md, Right on real documents) with the 0.5B model's S = 0.8:
    /// it answered as many as sequential prefill there at 22× its speed
    /// (on the held-out report half, 8.7 points fewer: docs/results.md),
    /// where the 48-token re-read it replaces lost answers plain APE got
    /// right (the window pulled "target/release" to "target/debug") at 9.5×,
    /// and a sequential re-answer of doubtful first tokens added nothing
    /// (`scripts/doubt-threshold.py`). An echo costs no prefill, so the
    /// window that saved prefill is no longer needed.
    pub const BALANCED: ApeSettings = ApeSettings {
        temperature_ape: None,
        scale_ape: None,
        reread: Some(1),
        reread_window: Some(0),
        reread_sentences: None,
        reread_echo: Some(true),
        focus: None,
        doubt: None,
        recompute: None,
    };

    /// `balanced`'s whole-chunk re-read by prefill, where it was measured
    /// and the echo was not. On a GPU: a 256-token chunk's prefill takes
    /// about 13 ms there on a small model's short context (docs/results.md, On an
    /// NVIDIA GPU), so the re-read is worth its cost (a big model over a
    /// long context is another matter: [`WHOLE_REREAD_BUDGET`](crate::answer::WHOLE_REREAD_BUDGET)). Over named
    /// files (`--file`): "how many" and "list every" need the chunk's every
    /// line (docs/results.md, Whole-file questions: a 48- or 64-token window answered
    /// 3 where the whole chunk gave 7).
    pub const BALANCED_WHOLE: ApeSettings = ApeSettings {
        temperature_ape: None,
        scale_ape: None,
        reread: Some(1),
        reread_window: Some(0),
        reread_sentences: None,
        reread_echo: Some(false),
        focus: None,
        doubt: None,
        recompute: None,
    };

    /// The mode this quality answers in under `settings` (what flags, the
    /// environment, the config files and the model's shipped calibration
    /// set) and, where it differs, the one for a whole-chunk re-read
    /// ([`Self::BALANCED_WHOLE`]). `balanced` is what is set above the
    /// preset: the user's settings over the model's shipped `balanced` ones
    /// (`FileConfig::balanced`; the 0.5B model's sets S = 0.8 for
    /// the echo, measured there). What the user set beats the preset,
    /// field by field, and the preset beats the calibration; `fast` never
    /// re-reads or doubts. A recomputation budget set by the user replaces
    /// `fast`'s and `balanced`'s APE; `exact` is sequential prefill.
    pub fn modes(
        self,
        settings: ApeSettings,
        balanced: ApeSettings,
    ) -> Result<(Mode, Option<Mode>), ConfigError> {
        if let (Some(_), Quality::Fast | Quality::Balanced) = (settings.recompute, self) {
            // Asked for by name, recomputation replaces the preset's APE
            // refinements (re-read, echo, focus), which it cannot combine
            // with; a re-read or focus set with it is still refused.
            let preset = ApeSettings {
                reread: settings.reread.or(Some(0)),
                focus: settings.focus.or(Some(0)),
                ..settings
            };
            return Ok((Mode::Ape(preset.params()?), None));
        }
        Ok(match self {
            Quality::Exact => (Mode::Sequential, None),
            Quality::Fast => (
                Mode::Ape(ApeParams {
                    reread: 0,
                    doubt: None,
                    recompute: None,
                    ..settings.params()?
                }),
                None,
            ),
            Quality::Balanced => {
                let window = balanced.over(Self::BALANCED).over(settings);
                let whole = settings.over(Self::BALANCED_WHOLE);
                let (window, whole) = (Mode::Ape(window.params()?), Mode::Ape(whole.params()?));
                (window, (whole != window).then_some(whole))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Quality::Fast => "fast",
            Quality::Balanced => "balanced",
            Quality::Exact => "exact",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shipped file that failed to parse would silently ship nothing.
    #[test]
    fn the_shipped_settings_parse_and_are_valid() {
        let all: BTreeMap<String, Shipped> =
            serde_json::from_str(SHIPPED_JSON).expect("assets/calibrated.json parses");
        assert!(!all.is_empty());
        for (id, s) in &all {
            assert_eq!(id.len(), 64, "{id} is a model identity");
            let (t, sc) = (s.settings.ape.temperature_ape, s.settings.ape.scale_ape);
            let params = ApeParams::new(t.expect("T"), sc.expect("S"));
            params.validate().expect("valid APE settings");
            assert_eq!(shipped(id), Some(s.settings));
            // `balanced`'s shipped settings, over the calibration.
            s.balanced
                .over(s.settings.ape)
                .params()
                .expect("valid balanced settings");
            assert_eq!(shipped_balanced(id), s.balanced);
        }
    }

    /// `balanced` stacks the user's settings over the model's shipped
    /// `balanced` ones; every other quality keeps the calibration's.
    #[test]
    fn balanced_settings_put_the_users_over_the_models_shipped_ones() {
        let all: BTreeMap<String, Shipped> =
            serde_json::from_str(SHIPPED_JSON).expect("assets/calibrated.json parses");
        // The 0.5B model ships S = 0.8 for `balanced`'s echo; the
        // layering holds for any.
        let (id, s) = all.iter().next().expect("a model ships settings");
        let plain = FileConfig::default().for_model(Some(id));
        assert_eq!(plain.balanced, s.balanced);
        assert_eq!(plain.ape.scale_ape, s.settings.ape.scale_ape);
        let mine = FileConfig {
            ape: ApeSettings {
                scale_ape: Some(0.95),
                ..ApeSettings::default()
            },
            ..FileConfig::default()
        }
        .for_model(Some(id));
        assert_eq!(mine.balanced.scale_ape, Some(0.95));
        assert_ne!(s.balanced.scale_ape, Some(0.95), "the user's, not shipped");
        assert_eq!(mine.balanced.reread_window, s.balanced.reread_window);
        assert_eq!(
            FileConfig::default().for_model(None).balanced,
            ApeSettings::default()
        );
    }

    #[test]
    fn a_recomputation_budget_replaces_the_presets_ape_but_not_exact() {
        let set = ApeSettings {
            recompute: Some(20),
            ..ApeSettings::default()
        };
        for q in [Quality::Fast, Quality::Balanced] {
            let (mode, whole) = q.modes(set, ApeSettings::default()).expect("valid");
            let Mode::Ape(p) = mode else {
                panic!("{mode:?}")
            };
            assert_eq!(
                (p.recompute, p.reread, p.echo, p.focus),
                (Some(20), 0, false, 0)
            );
            assert_eq!(whole, None);
        }
        let exact = Quality::Exact.modes(set, ApeSettings::default());
        assert_eq!(exact.expect("valid"), (Mode::Sequential, None));
        // A re-read asked for with it is refused, not dropped.
        let both = ApeSettings {
            reread: Some(1),
            ..set
        };
        assert!(Quality::Balanced
            .modes(both, ApeSettings::default())
            .is_err());
        let over = ApeSettings {
            recompute: Some(101),
            ..ApeSettings::default()
        };
        assert!(Quality::Fast.modes(over, ApeSettings::default()).is_err());
    }

    #[test]
    fn first_run_writes_a_template_that_parses_to_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sub/config.toml");
        assert_eq!(load_from(&p).expect("load"), FileConfig::default());
        assert!(std::fs::read_to_string(&p)
            .expect("written")
            .contains("# top_k = 5"));
        assert_eq!(load_from(&p).expect("reload"), FileConfig::default());
    }

    #[test]
    fn calibrated_model_settings_are_saved_beside_user_edits_and_win_for_that_model() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("c.toml");
        std::fs::write(&p, "# mine\ntop_k = 3\ntemperature_ape = 0.7\n").expect("write");
        let qwen = ModelConfig {
            ape: ApeSettings {
                temperature_ape: Some(0.8),
                scale_ape: Some(0.85),
                reread: Some(1),
                reread_window: None,
                reread_sentences: None,
                reread_echo: None,
                focus: None,
                doubt: None,
                recompute: None,
            },
            prefix_newlines: Some(2),
        };
        save_model(&p, "abc123", qwen, "qwen.gguf\nobjective f1").expect("save");
        let other = ModelConfig {
            ape: ApeSettings {
                scale_ape: Some(0.5),
                ..ApeSettings::default()
            },
            ..ModelConfig::default()
        };
        save_model(&p, "def456", other, "other").expect("save");
        save_model(&p, "abc123", qwen, "qwen.gguf, again").expect("overwrite");
        let text = std::fs::read_to_string(&p).expect("read");
        assert!(text.starts_with("# mine\ntop_k = 3"), "{text}");
        assert!(
            text.contains("# qwen.gguf, again") && !text.contains("objective f1"),
            "{text}"
        );
        assert!(text.contains("temperature_ape = 0.8\n"), "{text}");
        let c = load_from(&p).expect("load");
        assert_eq!(c.models.get("abc123"), Some(&qwen));
        let q = c.for_model(Some("abc123"));
        assert_eq!(
            (q.top_k, q.ape.temperature_ape),
            (Some(crate::index::TopK::Best(3)), Some(0.8))
        );
        assert_eq!((q.ape.scale_ape, q.prefix_newlines), (Some(0.85), Some(2)));
        assert_eq!(q.ape.reread, Some(1));
        let d = c.for_model(Some("def456"));
        assert_eq!(
            (d.ape.temperature_ape, d.ape.scale_ape),
            (Some(0.7), Some(0.5))
        );
        assert_eq!(c.for_model(Some("unknown")).ape.temperature_ape, Some(0.7));
        assert_eq!(c.for_model(None).ape.scale_ape, None);
        // A first save on a machine with no config starts from the template.
        let fresh = dir.path().join("new/config.toml");
        save_model(&fresh, "abc123", qwen, "x").expect("fresh");
        let c = load_from(&fresh).expect("load");
        assert_eq!(c.models.get("abc123"), Some(&qwen));
        assert!(std::fs::read_to_string(&fresh)
            .expect("read")
            .contains("# top_k = 5"));
    }

    #[test]
    fn values_typos_and_syntax_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("c.toml");
        std::fs::write(
            &p,
            "top_k = 3\nfolders = [\"/srv/docs\"]\nexclude = [\"drafts/\"]\n",
        )
        .expect("write");
        let c = load_from(&p).expect("load");
        assert_eq!(
            (c.top_k, c.folders.len()),
            (Some(crate::index::TopK::Best(3)), 1)
        );
        assert_eq!(
            (c.exclude, c.include.len()),
            (vec!["drafts/".to_string()], 0)
        );
        std::fs::write(&p, "topk = 3\n").expect("write");
        let e = load_from(&p).expect_err("unknown key").to_string();
        assert!(e.contains("c.toml") && e.contains("topk"), "{e}");
        std::fs::write(&p, "top_k = \n").expect("write");
        assert!(load_from(&p).is_err());
        // APE's keys are read through a flattened struct: still typed, and a
        // typo beside them, at the top or in a model's table, still refused.
        std::fs::write(
            &p,
            "temperature_ape = 0.7\nreread = 1\n[models.abc]\nfocus = 2\nprefix_newlines = 2\n",
        )
        .expect("write");
        let c = load_from(&p).expect("load");
        assert_eq!((c.ape.temperature_ape, c.ape.reread), (Some(0.7), Some(1)));
        let m = c.models.get("abc").expect("model table");
        assert_eq!((m.ape.focus, m.prefix_newlines), (Some(2), Some(2)));
        for bad in [
            "temperature_ape = 0.7\nscale_apee = 1\n",
            "[models.abc]\nreread = 1\nrereads = 2\n",
            "reread = \"one\"\n",
        ] {
            std::fs::write(&p, bad).expect("write");
            assert!(load_from(&p).is_err(), "{bad}");
        }
    }

    /// Every key a model's settings can have is in the first-run template,
    /// and each has a flag or belongs to the prefix flags.
    #[test]
    fn every_model_setting_is_in_the_template() {
        let all = ModelConfig {
            ape: ApeSettings {
                temperature_ape: Some(1.0),
                scale_ape: Some(1.0),
                reread: Some(1),
                reread_window: Some(1),
                reread_sentences: Some(true),
                reread_echo: Some(true),
                focus: Some(1),
                doubt: Some(-1.0),
                recompute: Some(20),
            },
            prefix_newlines: Some(1),
        };
        let keys = serde_json::to_value(all).expect("json");
        let keys = keys.as_object().expect("object");
        assert_eq!(keys.len(), 10);
        for k in keys.keys() {
            assert!(TEMPLATE.contains(&format!("\n# {k} = ")), "{k}");
            assert!(all.has(k) && !ModelConfig::default().has(k), "{k}");
        }
    }
}
