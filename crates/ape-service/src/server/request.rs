//! A chat completion request as clients send it. Fields OpenAI defines
//! that ape-chat honours are read (`stop`, `logprobs` and `top_logprobs`
//! among them); fields it has no use for (`store`, `metadata`,
//! `service_tier`, `parallel_tool_calls`, a newer client's additions…) are
//! ignored, as OpenAI's own API, llama-server and Ollama ignore them, and
//! named in the server's debug log; a feature asked for that ape-chat does
//! not have (tools, `n` > 1, penalties, `logit_bias`, a JSON response
//! format) is refused by name, never silently dropped.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::ApiError;
use crate::answer::AskOptions;
use crate::conversation::{self, Message};
use crate::engine::Sampling;
use crate::index::TopK;
use crate::service::Question;

/// Largest `max_tokens` a request may ask for.
pub(super) const MAX_TOKENS_CAP: usize = 4096;

/// Stop texts a request may give, as OpenAI allows.
const MAX_STOPS: usize = 4;

/// Longest stop text, in bytes: a stop longer than any answer is a mistake,
/// and each one is looked for after every token.
const MAX_STOP_BYTES: usize = 1024;

/// Most alternatives per token `top_logprobs` may ask for, as OpenAI allows.
const MAX_TOP_LOGPROBS: u32 = 20;

/// The sampling seed when a request names none (as `--seed`'s default).
const DEFAULT_SEED: u32 = 42;

#[derive(Debug, Deserialize)]
pub(crate) struct ChatRequest {
    messages: Vec<Message>,
    /// Any name is accepted (clients send their own); responses name the
    /// served model.
    #[serde(default)]
    #[allow(dead_code)]
    model: Option<String>,
    #[serde(default)]
    pub stream: bool,
    /// Usage is always sent (the last chunk before `[DONE]`, with no
    /// choices, as `include_usage` asks); other options are ignored.
    #[serde(default)]
    #[allow(dead_code)]
    stream_options: Option<Value>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    max_completion_tokens: Option<u32>,
    #[serde(default)]
    temperature: Option<f32>,
    #[serde(default)]
    top_p: Option<f32>,
    /// Any JSON integer (clients send 64-bit seeds), folded to the
    /// sampler's 32 bits.
    #[serde(default)]
    seed: Option<serde_json::Number>,
    #[serde(default)]
    n: Option<u32>,
    #[serde(default)]
    stop: Option<Value>,
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    tool_choice: Option<Value>,
    #[serde(default)]
    functions: Option<Value>,
    #[serde(default)]
    response_format: Option<Value>,
    /// Each answer token's log-probability in the response
    /// (`choices[].logprobs.content`).
    #[serde(default)]
    logprobs: Option<bool>,
    /// With `logprobs`: that many most likely tokens beside each one.
    #[serde(default)]
    top_logprobs: Option<u32>,
    #[serde(default)]
    logit_bias: Option<Value>,
    #[serde(default)]
    presence_penalty: Option<f32>,
    #[serde(default)]
    frequency_penalty: Option<f32>,
    /// ape-chat's own (`extra_body` in OpenAI's clients): chunks to read, a
    /// number or `"all"`, as `--top-k`.
    #[serde(default)]
    top_k: Option<TopK>,
    /// ape-chat's own: files (relative to the folder) read whole besides
    /// the best chunks, as `--file`.
    #[serde(default)]
    files: Vec<String>,
    /// Everything else: ignored, and named in the debug log.
    #[serde(flatten)]
    ignored: BTreeMap<String, Value>,
}

impl ChatRequest {
    /// The names of the fields this request sent that ape-chat ignores.
    pub fn ignored(&self) -> impl Iterator<Item = &str> {
        self.ignored.keys().map(String::as_str)
    }

    /// Refuses what is asked for but not supported.
    fn check(&self) -> Result<(), ApiError> {
        let present = |v: &Option<Value>| v.as_ref().is_some_and(|v| !v.is_null());
        let nonempty = |v: &Option<Value>| {
            v.as_ref().is_some_and(|v| match v {
                Value::Null => false,
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
                Value::String(s) => !s.is_empty(),
                _ => true,
            })
        };
        if self.n.is_some_and(|n| n != 1) {
            return Err(ApiError::unsupported(
                "n",
                "n must be 1: one answer per request",
            ));
        }
        if nonempty(&self.tools) || nonempty(&self.functions) || present(&self.tool_choice) {
            return Err(ApiError::unsupported(
                "tools",
                "tools and function calling are not supported",
            ));
        }
        if let Some(n) = self.top_logprobs {
            if n > MAX_TOP_LOGPROBS {
                return Err(ApiError::invalid_param(
                    "top_logprobs",
                    format!("top_logprobs must be between 0 and {MAX_TOP_LOGPROBS}"),
                ));
            }
            if self.logprobs != Some(true) {
                return Err(ApiError::invalid_param(
                    "top_logprobs",
                    "top_logprobs needs logprobs set to true",
                ));
            }
        }
        if nonempty(&self.logit_bias) {
            return Err(ApiError::unsupported(
                "logit_bias",
                "logit_bias is not supported",
            ));
        }
        self.stops()?;
        if let Some(f) = &self.response_format {
            if f.get("type").and_then(Value::as_str) != Some("text") {
                return Err(ApiError::unsupported(
                    "response_format",
                    "only the text response format is supported",
                ));
            }
        }
        for (name, v) in [
            ("presence_penalty", self.presence_penalty),
            ("frequency_penalty", self.frequency_penalty),
        ] {
            if v.is_some_and(|v| v != 0.0) {
                return Err(ApiError::unsupported(
                    name,
                    format!("{name} is not supported"),
                ));
            }
        }
        if self.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
            return Err(ApiError::invalid("temperature must be between 0 and 2"));
        }
        if self.top_p.is_some_and(|p| !(p > 0.0 && p <= 1.0)) {
            return Err(ApiError::invalid("top_p must be in (0, 1]"));
        }
        if let Some(so) = &self.stream_options {
            if !so.is_object() && !so.is_null() {
                return Err(ApiError::invalid("stream_options must be an object"));
            }
        }
        Ok(())
    }

    /// The stop texts: none, one string, or a list of up to four, none
    /// empty (an empty one would end every answer before it began).
    fn stops(&self) -> Result<Vec<String>, ApiError> {
        let bad = |why: String| ApiError::invalid_param("stop", why);
        let list = match &self.stop {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(bad("stop must be a string or a list of strings".into())),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad("stop must be a string or a list of strings".into())),
        };
        if list.len() > MAX_STOPS {
            return Err(bad(format!(
                "stop takes at most {MAX_STOPS} texts, not {}",
                list.len()
            )));
        }
        if list.iter().any(String::is_empty) {
            return Err(bad("a stop text must not be empty".into()));
        }
        if list.iter().any(|s| s.len() > MAX_STOP_BYTES) {
            return Err(bad(format!(
                "a stop text must be at most {MAX_STOP_BYTES} bytes"
            )));
        }
        Ok(list)
    }

    /// How many alternatives each answer token comes with, when the
    /// response reports log-probabilities at all (`logprobs`).
    pub fn logprobs(&self) -> Option<usize> {
        (self.logprobs == Some(true)).then(|| self.top_logprobs.unwrap_or(0) as usize)
    }

    /// The seed folded to 32 bits: distinct small seeds stay distinct, and
    /// a 64-bit one still picks a sampler.
    fn seed(&self) -> Result<u32, ApiError> {
        let Some(n) = &self.seed else {
            return Ok(DEFAULT_SEED);
        };
        let bits = match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u,
            (None, Some(i)) => i as u64,
            _ => return Err(ApiError::invalid("seed must be an integer")),
        };
        Ok((bits ^ (bits >> 32)) as u32)
    }

    /// The server's answer settings with this request's overrides.
    fn options(&self, base: AskOptions) -> Result<AskOptions, ApiError> {
        let mut o = base;
        if let Some(n) = self.max_completion_tokens.or(self.max_tokens) {
            if n == 0 || n as usize > MAX_TOKENS_CAP {
                return Err(ApiError::invalid(format!(
                    "max_tokens must be between 1 and {MAX_TOKENS_CAP}"
                )));
            }
            o.generate.max_tokens = n as usize;
        }
        let seed = self.seed()?;
        match self.temperature {
            Some(t) if t > 0.0 => {
                o.generate.sampling = Sampling::Sample {
                    temperature: t,
                    top_p: self.top_p.unwrap_or(1.0),
                    seed,
                }
            }
            Some(_) => o.generate.sampling = Sampling::Greedy,
            None => {}
        }
        if let Some(k) = self.top_k {
            o.top_k = k;
        }
        o.generate.stop = self.stops()?;
        o.generate.top_logprobs = self.logprobs().unwrap_or(0);
        Ok(o)
    }
}

/// Parses and checks a request: the question, its conversation, options.
pub(crate) fn parse(base: &AskOptions, bytes: &[u8]) -> Result<(ChatRequest, Question), ApiError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ApiError::invalid(format!("the body is not UTF-8: {e}")))?;
    let req: ChatRequest = serde_json::from_str(text)
        .map_err(|e| ApiError::invalid(format!("the body is not a chat request: {e}")))?;
    req.check()?;
    let options = req.options(base.clone())?;
    let files = req.files.clone();
    let (text, history) = conversation::from_messages(&req.messages).map_err(|e| ApiError {
        param: Some("messages".into()),
        ..ApiError::invalid(e.to_string())
    })?;
    Ok((
        req,
        Question {
            text,
            history,
            options: Some(options),
            files,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(json: &str) -> Result<ChatRequest, String> {
        let r: ChatRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        r.check().map_err(|e| e.message)?;
        r.options(AskOptions::default()).map_err(|e| e.message)?;
        Ok(r)
    }

    const MSGS: &str = r#""messages":[{"role":"user","content":"hi"}]"#;

    #[test]
    fn unsupported_parameters_are_refused_by_name() {
        assert!(req(&format!("{{{MSGS}}}")).is_ok());
        assert!(req(&format!("{{{MSGS},\"n\":1,\"tools\":[],\"stop\":null}}")).is_ok());
        for (extra, says) in [
            (r#""n":2"#, "n must be 1"),
            (r#""tools":[{"type":"function"}]"#, "tools"),
            (r#""logit_bias":{"1":5}"#, "logit_bias"),
            (r#""top_logprobs":3"#, "needs logprobs"),
            (r#""logprobs":true,"top_logprobs":21"#, "between 0 and 20"),
            (r#""logprobs":"yes""#, "invalid type"),
            (r#""stop":["a","b","c","d","e"]"#, "at most 4"),
            (r##""stop":"""##, "must not be empty"),
            (r#""stop":["x",""]"#, "must not be empty"),
            (r#""stop":[1]"#, "a string or a list"),
            (r#""stop":{"a":1}"#, "a string or a list"),
            (r#""presence_penalty":0.5"#, "presence_penalty"),
            (
                r#""response_format":{"type":"json_object"}"#,
                "text response format",
            ),
            (r#""temperature":3"#, "between 0 and 2"),
            (r#""max_tokens":"ten""#, "invalid type"),
            (r#""top_k":"many""#, "top-k must be"),
            (r#""top_k":0"#, "top-k must be"),
            (r#""files":"a.md""#, "invalid type"),
            (r#""seed":1.5"#, "seed must be an integer"),
            (
                r#""stream_options":true"#,
                "stream_options must be an object",
            ),
        ] {
            let e = req(&format!("{{{MSGS},{extra}}}")).expect_err(extra);
            assert!(e.contains(says), "{extra}: {e}");
        }
    }

    /// `stop` as OpenAI takes it (a string or up to four), and `logprobs`
    /// with `top_logprobs`, reach the answer's decoding.
    #[test]
    fn stop_texts_and_logprobs_reach_the_decoding() {
        let opts = |extra: &str| {
            let r: ChatRequest =
                serde_json::from_str(&format!("{{{MSGS},{extra}}}")).expect("parses");
            r.check().expect("accepted");
            r.options(AskOptions::default()).expect("options").generate
        };
        assert_eq!(opts(r#""stop":"\n""#).stop, ["\n"]);
        assert_eq!(opts(r#""stop":["END","Q:"]"#).stop, ["END", "Q:"]);
        assert!(opts(r#""stop":null"#).stop.is_empty());
        assert!(opts(r#""stop":[]"#).stop.is_empty());
        assert_eq!(opts(r#""logprobs":true,"top_logprobs":5"#).top_logprobs, 5);
        assert_eq!(opts(r#""logprobs":true"#).top_logprobs, 0);
        assert_eq!(opts(r#""logprobs":false"#).top_logprobs, 0);
        let r: ChatRequest =
            serde_json::from_str(&format!(r#"{{{MSGS},"logprobs":true,"top_logprobs":2}}"#))
                .expect("parses");
        assert_eq!(r.logprobs(), Some(2));
        let r: ChatRequest = serde_json::from_str(&format!("{{{MSGS}}}")).expect("parses");
        assert_eq!(r.logprobs(), None);
    }

    /// What real clients send beside the fields ape-chat uses: ignored
    /// (and listed for the log), never a 400.
    #[test]
    fn fields_clients_add_are_ignored_and_listed() {
        let r = req(&format!(
            r#"{{{MSGS},"store":false,"metadata":{{"a":"b"}},"parallel_tool_calls":true,
                "stream":true,"stream_options":{{"include_usage":true,"include_obfuscation":false}},
                "service_tier":"auto","user":"u1","frobnicate":1}}"#
        ))
        .expect("accepted");
        assert!(r.stream);
        assert_eq!(
            r.ignored().collect::<Vec<_>>(),
            [
                "frobnicate",
                "metadata",
                "parallel_tool_calls",
                "service_tier",
                "store",
                "user"
            ]
        );
    }

    #[test]
    fn a_seed_is_any_integer() {
        let seed = |s: &str| {
            req(&format!("{{{MSGS},\"seed\":{s}}}"))
                .expect(s)
                .seed()
                .expect("seed")
        };
        assert_eq!(seed("7"), 7);
        assert_ne!(seed("18446744073709551615"), seed("7"));
        assert_ne!(seed("-3"), seed("3"));
        assert_ne!(seed("4294967296"), seed("0"), "past u32 still differs");
        let r: ChatRequest = serde_json::from_str(&format!("{{{MSGS}}}")).expect("parses");
        assert_eq!(r.seed().expect("default"), DEFAULT_SEED);
    }

    #[test]
    fn content_parts_reach_the_question() {
        let body = br#"{"messages":[{"role":"user","content":[{"type":"text","text":"How long"},{"type":"text","text":"are backups kept?"}]}]}"#;
        let (_, q) = parse(&AskOptions::default(), body).expect("parses");
        assert_eq!(q.text, "How long\nare backups kept?");
        let body = br#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:"}}]}]}"#;
        let e = parse(&AskOptions::default(), body).expect_err("an image");
        assert!(e.message.contains("\"image_url\""), "{}", e.message);
    }

    #[test]
    fn top_k_and_whole_files_come_with_the_request() {
        let r: ChatRequest = serde_json::from_str(&format!(
            r#"{{{MSGS},"top_k":"all","files":["a.md","b/c.csv"]}}"#
        ))
        .expect("parses");
        let o = r.options(AskOptions::default()).expect("options");
        assert_eq!(o.top_k, TopK::All);
        assert_eq!(r.files, ["a.md", "b/c.csv"]);
        let r: ChatRequest =
            serde_json::from_str(&format!(r#"{{{MSGS},"top_k":12}}"#)).expect("parses");
        assert_eq!(
            r.options(AskOptions::default()).expect("options").top_k,
            TopK::Best(12)
        );
        // Unset, the server's own setting stays.
        let r: ChatRequest = serde_json::from_str(&format!("{{{MSGS}}}")).expect("parses");
        let base = AskOptions {
            top_k: TopK::Best(3),
            ..AskOptions::default()
        };
        assert_eq!(r.options(base).expect("options").top_k, TopK::Best(3));
        assert!(r.files.is_empty());
    }
}
