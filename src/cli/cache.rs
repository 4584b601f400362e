//! `ape-chat cache stats|gc|clear`: inspect and trim the KV-state cache.

use std::process::ExitCode;

use clap::Subcommand;

use super::style::bold;
use crate::index::referenced_states;
use crate::kvstore::{KvStore, Unreferenced};

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Entries and bytes, and how many an index still refers to.
    Stats {
        #[arg(long)]
        json: bool,
    },
    /// Remove leftovers and unreferenced states, then evict least-recently
    /// used ones beyond the budget.
    Gc {
        /// Budget in GB [default: 20].
        #[arg(long, env = "APE_CHAT_CACHE_BUDGET_GB", value_name = "GB")]
        budget_gb: Option<f64>,
        #[arg(long)]
        json: bool,
    },
    /// Remove every cached state (indexes re-encode them on their next update).
    Clear,
}

impl CacheCommand {
    /// Fills what flags and env left unset from the config file.
    pub fn apply(&mut self, c: &crate::config::FileConfig) {
        if let CacheCommand::Gc { budget_gb, .. } = self {
            *budget_gb = budget_gb.or(c.cache_budget_gb);
        }
    }
}

pub fn run(cmd: &CacheCommand) -> anyhow::Result<ExitCode> {
    let store = KvStore::default_location();
    let mb = |b: u64| b as f64 / 1e6;
    match cmd {
        CacheCommand::Stats { json } => {
            let s = store.stats(&referenced_states());
            if *json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                println!(
                    "{} {}",
                    bold("KV-state cache"),
                    crate::paths::kv_dir().display()
                );
                println!("  {} states, {:.1} MB", s.entries, mb(s.bytes));
                println!(
                    "  {} referenced by an index ({:.1} MB), {} compact",
                    s.referenced,
                    mb(s.referenced_bytes),
                    s.compact
                );
                if s.memory.is_empty() {
                    println!("{}", bold("Memory tiers: no ape-chat process is answering"));
                }
                for p in &s.memory {
                    println!("{} process {} ({})", bold("Memory tiers:"), p.pid, p.model);
                    if let Some(st) = &p.state_store {
                        println!(
                            "  shared store: {} states fetched ({:.1} MB in {:.0} ms), {} missed, {} written, {} replaced, {} failures",
                            st.fetched,
                            mb(st.fetched_bytes),
                            st.fetch_ms,
                            st.misses,
                            st.written,
                            st.replaced,
                            st.failures
                        );
                    }
                    for t in &p.tiers {
                        println!(
                            "  {:<6} {} states, {:.1} of {:.1} MB · {} hits, {} evicted",
                            t.tier,
                            t.entries,
                            mb(t.used_bytes),
                            mb(t.budget_bytes),
                            t.hits,
                            t.evictions
                        );
                    }
                }
            }
        }
        CacheCommand::Gc { budget_gb, json } => {
            let r = store.gc(
                &referenced_states(),
                super::budget_bytes(*budget_gb),
                Unreferenced::Remove,
            );
            if *json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!(
                    "removed {} unreferenced, {} least-recently-used, {} temp files: {:.1} MB freed, {:.1} MB left",
                    r.unreferenced_removed,
                    r.evicted,
                    r.temp_files_removed,
                    mb(r.bytes_freed),
                    mb(r.bytes_after)
                );
            }
        }
        CacheCommand::Clear => println!("removed {} cached states", store.clear()),
    }
    Ok(ExitCode::SUCCESS)
}
