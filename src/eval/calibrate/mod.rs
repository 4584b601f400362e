//! Choosing APE's settings for a model, the paper's named weak spot, without
//! fooling ourselves:
//!
//! 1. records are split by source (SQuAD article, else their set of
//!    paragraphs) into three parts that never share a paragraph: **search**
//!    (the prefix variant, then T and S·T by [`search::pattern_search`]),
//!    **accept** (the found setting is kept only if it beats the defaults
//!    here) and **report** (defaults vs the chosen setting, measured after
//!    every choice was made, so the "after" figure is not optimistic);
//! 2. the prefix variant is chosen at the default T and S with the same
//!    objective; the attention objective compares prefix variants over the
//!    same keys (chunks and question, renormalised);
//! 3. the result names the records and sources it used, so evaluation can
//!    warn when it is run on any of them.

pub mod measure;
pub mod search;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::datasets::Record;
use super::run::{prepare, Prepared, Stamp};
use crate::engine::{ApeParams, Engine, EngineError, PromptLayout};
use crate::kvstore::KvStore;
use crate::states::States;
pub use measure::{CalibrateError, Measure, Split};
pub use search::{best, pattern_search, Objective, SearchOptions, Trial};

/// What to calibrate on and for.
#[derive(Clone, Debug)]
pub struct CalibrateOptions {
    pub objective: Objective,
    /// Records in the search, accept and report parts (whole sources each,
    /// so a part can run over by the rest of its last source).
    pub parts: [usize; 3],
    /// Prefix variants to try: newline tokens appended to the prefix.
    pub prefix_newlines: Vec<usize>,
    pub system_prompt: String,
    /// Instruction appended to each question (as `eval --style`).
    pub style: String,
    pub max_tokens: usize,
    pub search: SearchOptions,
}

/// A prefix variant and APE setting together.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    pub params: ApeParams,
    pub prefix_newlines: usize,
}

impl Setting {
    /// The paper's defaults on the plain prefix.
    pub const DEFAULT: Self = Self {
        params: ApeParams::DEFAULT,
        prefix_newlines: 0,
    };
}

/// A prefix variant's loss at the default T and S on the search part.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Variant {
    pub prefix_newlines: usize,
    pub loss: f64,
}

/// Which records a calibration used, by part: evaluation on any of them
/// (or on their sources) would not be held out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub dataset: String,
    /// Sources (articles) per part: search, accept, report.
    pub sources: [Vec<String>; 3],
    pub record_ids: Vec<String>,
}

impl Provenance {
    /// Records of `records` that this calibration used or that share a
    /// source with one it used.
    pub fn overlap<'r>(&self, records: &'r [Record]) -> Vec<&'r Record> {
        let sources: std::collections::HashSet<&str> =
            self.sources.iter().flatten().map(String::as_str).collect();
        let ids: std::collections::HashSet<&str> =
            self.record_ids.iter().map(String::as_str).collect();
        records
            .iter()
            .filter(|r| ids.contains(r.id.as_str()) || sources.contains(source(r).as_str()))
            .collect()
    }
}

/// Where the provenance of the calibration saved for model `id` is kept.
fn provenance_path(id: &str) -> std::path::PathBuf {
    crate::paths::calibrations_dir().join(format!("{id}.json"))
}

/// Keeps what a calibration for model `id` used, for [`load_provenance`].
pub fn save_provenance(id: &str, p: &Provenance) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(p).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(&provenance_path(id), &[&json])
}

/// What the calibrations of model `id` used: the one saved by `calibrate`
/// on this machine and the one behind the settings shipped with ape-chat.
pub fn load_provenance(id: &str) -> Vec<Provenance> {
    let mine = std::fs::read(provenance_path(id))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    #[derive(Deserialize)]
    struct Shipped {
        provenance: Provenance,
    }
    let shipped: BTreeMap<String, Shipped> =
        serde_json::from_str(crate::config::SHIPPED_JSON).unwrap_or_default();
    mine.into_iter()
        .chain(
            shipped
                .into_iter()
                .filter(|(k, _)| k == id)
                .map(|(_, s)| s.provenance),
        )
        .collect()
}

/// The outcome, with everything needed to judge it.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    pub objective: Objective,
    pub provenance: Provenance,
    /// Records per part.
    pub records: [usize; 3],
    pub variants: Vec<Variant>,
    pub trials: Vec<Trial>,
    /// Best on the search part.
    pub found: Setting,
    /// Defaults and the found setting on the accept part.
    pub accept: [Measure; 2],
    pub accepted: bool,
    /// The found setting if accepted, else the defaults.
    pub chosen: Setting,
    /// Defaults and the chosen setting on the report part, which took part
    /// in no choice.
    pub report: [Measure; 2],
}

/// Long work, reported as it happens.
pub enum Progress<'a> {
    /// Starting one step (preparing a part, searching, measuring).
    Step(&'a str),
    Variant(&'a Variant),
    Trial(&'a Trial),
}

/// A record's source: its SQuAD article, else its paragraph set (records
/// over the same paragraphs must fall into one part).
pub fn source(r: &Record) -> String {
    r.group.clone().unwrap_or_else(|| {
        let mut h = blake3::Hasher::new();
        let mut ctx: Vec<&String> = r.contexts.iter().collect();
        ctx.sort();
        ctx.iter().for_each(|c| {
            h.update(c.as_bytes());
        });
        h.finalize().to_hex()[..16].to_string()
    })
}

/// Splits `records` into parts of about `sizes` records, whole sources
/// each, sources in a fixed pseudo-random order (by hash) so that no part
/// is one corner of the dataset.
pub fn split_by_source(records: &[Record], sizes: [usize; 3]) -> [Vec<Record>; 3] {
    let mut by_source: BTreeMap<String, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_source.entry(source(r)).or_default().push(r);
    }
    let mut sources: Vec<(String, Vec<&Record>)> = by_source.into_iter().collect();
    sources.sort_by_key(|(s, _)| blake3::hash(s.as_bytes()).to_hex().to_string());
    let mut parts: [Vec<Record>; 3] = Default::default();
    let mut part = 0;
    for (_, rs) in sources {
        while part < 3 && parts[part].len() >= sizes[part] {
            part += 1;
        }
        if part == 3 {
            break;
        }
        // A part takes a whole source but no more of it than it needs:
        // the rest of that source is left out, never given to another part.
        let want = sizes[part] - parts[part].len();
        parts[part].extend(spread(&rs, want).into_iter().cloned());
    }
    parts
}

/// Up to `n` of `xs`, spread evenly.
fn spread<'a, T>(xs: &[&'a T], n: usize) -> Vec<&'a T> {
    if xs.len() <= n {
        return xs.to_vec();
    }
    (0..n).map(|i| xs[i * xs.len() / n]).collect()
}

/// Runs the whole procedure on `records` with a fresh chunk-state store at
/// `store` (shared with evaluation runs of the same model and prompt).
pub fn calibrate(
    engine: &Engine,
    store: &dyn Fn() -> KvStore,
    records: &[Record],
    dataset: &str,
    o: &CalibrateOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Calibration, CalibrateError> {
    let labelled: Vec<Record> = records
        .iter()
        .filter(|r| !o.objective.needs_labels() || !r.answers.is_empty())
        .cloned()
        .collect();
    let [search_part, accept_part, report_part] = split_by_source(&labelled, o.parts);
    if search_part.is_empty() {
        return Err(CalibrateError::Layout(format!(
            "{dataset}: no records to calibrate on{}",
            if o.objective.needs_labels() {
                " (with answers)"
            } else {
                ""
            }
        )));
    }
    let mut s = engine.session()?;
    let attention = o.objective == Objective::Attention;
    let states_for = |newlines: usize| -> Result<States<'_>, EngineError> {
        let layout = PromptLayout::new(engine, &o.system_prompt)?.pad(engine, newlines);
        States::new(engine, layout, store())
    };
    let stamp = |states: &States<'_>, newlines: usize| {
        Stamp::new(states, &o.system_prompt, newlines, &o.style, o.max_tokens)
    };
    let prepare_part = |states: &States<'_>,
                        s: &mut crate::engine::Session<'_>,
                        part: &[Record]|
     -> Result<Vec<Prepared>, EngineError> {
        part.iter()
            .map(|r| prepare(states, s, r, &o.style, false))
            .collect()
    };

    // 1. The prefix variant, at the default T and S.
    let mut variants = Vec::new();
    let mut chosen: Option<(usize, States<'_>, Vec<Prepared>)> = None;
    for &n in &o.prefix_newlines {
        progress(Progress::Step(&format!(
            "search part, prefix +{n} newlines: preparing {} records",
            search_part.len()
        )));
        let states = states_for(n)?;
        let prepared = prepare_part(&states, &mut s, &search_part)?;
        if o.prefix_newlines.len() == 1 {
            chosen = Some((n, states, prepared));
            break;
        }
        let loss = {
            let split = Split::new(&states, &mut s, &prepared, attention, stamp(&states, n))?;
            split
                .measure(&mut s, ApeParams::DEFAULT, o.objective)?
                .loss(o.objective)
        };
        let v = Variant {
            prefix_newlines: n,
            loss,
        };
        progress(Progress::Variant(&v));
        let better = variants.iter().all(|w: &Variant| loss < w.loss);
        variants.push(v);
        if better {
            chosen = Some((n, states, prepared));
        }
    }
    let (newlines, states, prepared) =
        chosen.ok_or_else(|| CalibrateError::Layout("no prefix variant given".into()))?;

    // 2. T and S·T by pattern search.
    progress(Progress::Step("searching T and S·T"));
    let trials = {
        let split = Split::new(
            &states,
            &mut s,
            &prepared,
            attention,
            stamp(&states, newlines),
        )?;
        pattern_search(o.search, |p| {
            let loss = split.measure(&mut s, p, o.objective)?.loss(o.objective);
            progress(Progress::Trial(&Trial { params: p, loss }));
            Ok::<_, CalibrateError>(loss)
        })?
    };
    drop(prepared);
    let found_trial = best(&trials)
        .ok_or_else(|| CalibrateError::Layout("no setting could be evaluated".into()))?;
    let found = Setting {
        params: found_trial.params,
        prefix_newlines: newlines,
    };

    // 3. Accept or keep the defaults, on the accept part.
    let mut measure_part = |part: &[Record],
                            what: &str,
                            settings: [Setting; 2]|
     -> Result<[Measure; 2], CalibrateError> {
        let mut out = [Measure::default(); 2];
        let mut i = 0;
        while i < settings.len() && !part.is_empty() {
            // Settings on the same prefix share the preparation (and the
            // attention objective's sequential reference).
            let n = settings[i].prefix_newlines;
            progress(Progress::Step(&format!(
                "{what} part: {} records, prefix +{n}",
                part.len()
            )));
            let st = states_for(n)?;
            let prepared = prepare_part(&st, &mut s, part)?;
            let split = Split::new(&st, &mut s, &prepared, attention, stamp(&st, n))?;
            while i < settings.len() && settings[i].prefix_newlines == n {
                out[i] = measure_all(&split, &mut s, settings[i].params, o.objective)?;
                i += 1;
            }
        }
        Ok(out)
    };
    let accept = measure_part(&accept_part, "accept", [Setting::DEFAULT, found])?;
    let accepted = found == Setting::DEFAULT
        || accept_part.is_empty()
        || accept[1].loss(o.objective) < accept[0].loss(o.objective);
    let chosen = if accepted { found } else { Setting::DEFAULT };

    // 4. The report, on records that took part in no choice.
    let report = measure_part(&report_part, "report", [Setting::DEFAULT, chosen])?;

    let parts = [&search_part, &accept_part, &report_part];
    Ok(Calibration {
        objective: o.objective,
        provenance: Provenance {
            dataset: dataset.to_string(),
            sources: parts.map(|p| {
                let mut s: Vec<String> = p.iter().map(source).collect();
                s.dedup();
                s
            }),
            record_ids: parts
                .iter()
                .flat_map(|p| p.iter().map(|r| r.id.clone()))
                .collect(),
        },
        records: parts.map(|p| p.len()),
        variants,
        trials,
        found,
        accept,
        accepted,
        chosen,
        report,
    })
}

/// Everything a part can tell about a setting: F1 and NLL with labels, and
/// attention KL for that objective.
fn measure_all(
    split: &Split<'_, '_>,
    s: &mut crate::engine::Session<'_>,
    params: ApeParams,
    objective: Objective,
) -> Result<Measure, CalibrateError> {
    let mut m = Measure::default();
    if objective.needs_labels() {
        m = split.measure(s, params, Objective::F1)?;
    }
    if objective == Objective::Attention {
        m.attention_kl = split.measure(s, params, Objective::Attention)?.attention_kl;
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, group: &str) -> Record {
        Record {
            id: id.into(),
            question: "q".into(),
            contexts: vec![format!("paragraph of {group}")],
            answers: vec!["a".into()],
            group: Some(group.into()),
            gold_context: None,
            parts: Vec::new(),
        }
    }

    #[test]
    fn parts_never_share_a_source_and_are_reproducible() {
        let records: Vec<Record> = (0..60)
            .map(|i| rec(&format!("r{i}"), &format!("article {}", i % 12)))
            .collect();
        let parts = split_by_source(&records, [7, 7, 7]);
        let sources =
            |p: &[Record]| -> std::collections::HashSet<String> { p.iter().map(source).collect() };
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            assert!(
                sources(&parts[i]).is_disjoint(&sources(&parts[j])),
                "parts {i} and {j}"
            );
        }
        for p in &parts {
            assert_eq!(p.len(), 7);
        }
        assert_eq!(split_by_source(&records, [7, 7, 7]), parts);
        let prov = Provenance {
            dataset: "d".into(),
            sources: parts.clone().map(|p| p.iter().map(source).collect()),
            record_ids: vec![],
        };
        // Every record of a used article overlaps, used or not.
        let used: std::collections::HashSet<String> =
            parts.iter().flat_map(|p| sources(p)).collect();
        let expected = records.iter().filter(|r| used.contains(&source(r))).count();
        assert_eq!(prov.overlap(&records).len(), expected);
        assert!(
            expected > 21,
            "whole articles are marked, not just the records taken"
        );
    }
}
