//! Drawing the [`Model`]: chat history (left), sources of the shown answer
//! (right, when the terminal is wide enough), input box, status bar, and the
//! key-binding overlay.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use super::model::{Model, Turn};

/// Below this width the sources pane is hidden to keep the chat readable.
const WIDE: u16 = 90;

const KEYS: &[(&str, &str)] = &[
    ("Enter", "ask the question"),
    ("Esc / Ctrl-C", "stop the answer being generated"),
    ("Ctrl-C (idle) / Ctrl-D", "quit"),
    ("↑ / ↓", "earlier questions"),
    ("← → Home End", "move in the input"),
    ("PgUp / PgDn", "an earlier / later answer and its sources"),
    ("Ctrl-N", "start a new conversation"),
    ("Tab / Shift-Tab", "highlight the next / previous source"),
    ("Ctrl-O", "open the highlighted source at its place"),
    ("Ctrl-Y", "copy the answer (OSC 52: works over ssh)"),
    ("Ctrl-F", "next question: this source's whole file"),
    ("@path", "in a question: read that file whole"),
    ("?", "this help (any key closes it)"),
];

/// Renders the whole screen.
pub fn view(f: &mut Frame<'_>, m: &Model) {
    let [main, input, status] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    if main.width >= WIDE {
        let [chat, sources] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(main);
        draw_chat(f, m, chat);
        draw_sources(f, m, sources);
    } else {
        draw_chat(f, m, main);
    }
    draw_input(f, m, input);
    draw_status(f, m, status);
    if m.help {
        draw_help(f, f.area(), &m.skipped);
    }
}

fn draw_chat(f: &mut Frame<'_>, m: &Model, area: Rect) {
    let block = Block::bordered().title(" chat ");
    let inner = block.inner(area);
    let width = inner.width.max(1) as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if m.turns.is_empty() {
        lines.push(Line::from("Ask a question about your documents below.").dim());
        lines.push(Line::from("Press ? for key bindings.").dim());
    }
    // Where each turn starts, so a selected (PgUp) turn is scrolled to.
    let mut starts = Vec::with_capacity(m.turns.len());
    for (i, t) in m.turns.iter().enumerate() {
        if t.starts_conversation && i > 0 {
            let rule = "─".repeat(width.saturating_sub(20) / 2);
            lines.push(Line::from(format!("{rule} new conversation {rule}")).dim());
            lines.push(Line::default());
        }
        starts.push(lines.len());
        turn_lines(t, width, &mut lines);
    }
    if m.fresh {
        lines.push(Line::from("— the next question starts a new conversation —").dim());
    }
    let height = inner.height as usize;
    let bottom = lines.len().saturating_sub(height);
    let skip = match m.selected.and_then(|i| starts.get(i)) {
        Some(&start) => start.min(bottom),
        None => bottom,
    };
    let below = lines.len().saturating_sub(skip + height);
    let block = if below > 0 {
        block.title_bottom(Line::from(format!(" ↓ {below} more lines (PgDn) ")).right_aligned())
    } else {
        block
    };
    f.render_widget(block, area);
    let shown: Vec<Line<'static>> = lines.into_iter().skip(skip).take(height).collect();
    f.render_widget(Paragraph::new(shown), inner);
}

fn turn_lines(t: &Turn, width: usize, out: &mut Vec<Line<'static>>) {
    let you = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
    for (i, l) in wrap(&format!("you: {}", t.question), width)
        .into_iter()
        .enumerate()
    {
        out.push(if i == 0 {
            Line::styled(l, you)
        } else {
            Line::styled(l, Style::new().fg(Color::Cyan))
        });
    }
    let mut code = false;
    for raw in t.answer.lines() {
        if raw.trim_start().starts_with("```") {
            code = !code;
            continue;
        }
        let (text, style) = markdownish(raw, code);
        for l in wrap(&text, width) {
            out.push(Line::styled(l, style));
        }
    }
    if t.streaming {
        out.push(Line::from("▌").fg(Color::Yellow));
    }
    if let Some(e) = &t.error {
        out.extend(
            wrap(&format!("✗ {e}"), width)
                .into_iter()
                .map(|l| Line::styled(l, Style::new().fg(Color::Red))),
        );
    }
    out.push(Line::default());
}

/// Headings bold, bullets as •, code dimmed, `**` markers dropped.
fn markdownish(line: &str, code: bool) -> (String, Style) {
    if code {
        return (format!("  {line}"), Style::new().fg(Color::Green));
    }
    let trimmed = line.trim_start();
    if let Some(h) = trimmed.strip_prefix('#') {
        return (
            h.trim_start_matches('#').trim().to_string(),
            Style::new().add_modifier(Modifier::BOLD),
        );
    }
    let text = match trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("* "))
    {
        Some(rest) => format!("• {rest}"),
        None => line.to_string(),
    };
    (text.replace("**", ""), Style::new())
}

/// Word wrap by characters (good enough for prose; never splits mid-word
/// unless a word is wider than the line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let (cw, ww) = (cur.chars().count(), word.chars().count());
        if cw > 0 && cw + 1 + ww > width {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
        while cur.chars().count() > width {
            let head: String = cur.chars().take(width).collect();
            cur = cur.chars().skip(width).collect();
            out.push(head);
        }
    }
    out.push(cur);
    out
}

fn draw_sources(f: &mut Frame<'_>, m: &Model, area: Rect) {
    let block = Block::bordered().title(" sources ");
    let inner = block.inner(area);
    let width = inner.width.max(1) as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    match m.shown_turn() {
        Some(t) if !t.sources.is_empty() => {
            for (i, s) in t.sources.iter().enumerate() {
                let place = match &s.place {
                    Some(p) => format!("{} {p}", s.path),
                    None => format!("{}:{}-{}", s.path, s.lines.0, s.lines.1),
                };
                let (mark, style) = if i == m.source.min(t.sources.len() - 1) {
                    ("›", Style::new().add_modifier(Modifier::BOLD))
                } else {
                    (" ", Style::new())
                };
                lines.push(Line::from(Span::styled(
                    format!("{mark}{}. {place}", i + 1),
                    style,
                )));
                if !s.heading.is_empty() {
                    lines.extend(
                        wrap(&s.heading, width.saturating_sub(3))
                            .into_iter()
                            .map(|l| Line::from(format!("   {l}")).dim()),
                    );
                }
            }
            if let Some(top) = t.sources.get(m.source).or(t.sources.first()) {
                lines.push(Line::default());
                lines.push(Line::from(format!("── {} ──", top.path)).bold());
                for l in top.preview.lines().take(12) {
                    lines.extend(wrap(l, width).into_iter().map(|w| Line::from(w).dim()));
                }
            }
        }
        Some(t) if t.streaming => lines.push(Line::from("retrieving…").dim()),
        _ => lines.push(Line::from("Sources of the answer appear here.").dim()),
    }
    f.render_widget(block, area);
    f.render_widget(Paragraph::new(lines), inner);
}

fn draw_input(f: &mut Frame<'_>, m: &Model, area: Rect) {
    let title = if m.busy {
        " answering… (Esc to stop) ".to_string()
    } else if !m.whole.is_empty() {
        format!(
            " ask, reading {} whole (Ctrl-F takes one back) ",
            m.whole.join(", ")
        )
    } else {
        " ask (Enter to send, ? for help) ".to_string()
    };
    let block = Block::bordered().title(title);
    let inner = block.inner(area);
    // Keep the cursor visible in long inputs.
    let width = inner.width.max(1) as usize;
    let start = m.cursor.saturating_sub(width.saturating_sub(1));
    let shown: String = m.input.chars().skip(start).take(width).collect();
    f.render_widget(block, area);
    f.render_widget(Paragraph::new(shown), inner);
    if !m.help {
        f.set_cursor_position((inner.x + (m.cursor - start) as u16, inner.y));
    }
}

fn draw_status(f: &mut Frame<'_>, m: &Model, area: Rect) {
    let s = &m.status;
    let mut parts = vec![
        s.model.clone(),
        s.mode.clone(),
        format!("{} files, {} chunks", s.files, s.chunks),
    ];
    if let Some(ttft) = s.last_ttft_ms {
        parts.push(format!("TTFT {ttft:.0} ms"));
    }
    if let Some(tps) = s.last_tokens_per_s {
        parts.push(format!("{tps:.1} tok/s"));
    }
    if !s.activity.is_empty() {
        parts.push(s.activity.clone());
    }
    let line = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    f.render_widget(Paragraph::new(line).style(Style::new().reversed()), area);
}

/// Files not indexed listed under the keys, at most this many.
const SKIPPED_SHOWN: usize = 6;

fn draw_help(f: &mut Frame<'_>, area: Rect, skipped: &[(String, String)]) {
    let w = 68.min(area.width);
    let mut lines: Vec<Line<'static>> = KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!("{k:>22}  "), Style::new().bold()),
                Span::raw(*what),
            ])
        })
        .collect();
    if !skipped.is_empty() {
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!("not indexed ({}):", skipped.len()),
            Style::new().bold(),
        ));
        let room = usize::from(w.saturating_sub(4));
        for (path, reason) in skipped.iter().take(SKIPPED_SHOWN) {
            let text: String = format!("{path}: {reason}").chars().take(room).collect();
            lines.push(Line::raw(text));
        }
        if skipped.len() > SKIPPED_SHOWN {
            lines.push(Line::raw(format!(
                "… and {} more (ape-chat index --json lists every one)",
                skipped.len() - SKIPPED_SHOWN
            )));
        }
    }
    let h = (lines.len() as u16 + 2).min(area.height);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" keys ")),
        r,
    );
}

#[cfg(test)]
mod tests {
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use super::super::model::{Model, SourceView, Status, Turn};
    use super::*;

    fn screen(m: &Model, w: u16, h: u16) -> TestBackend {
        let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        t.draw(|f| view(f, m)).expect("draw");
        t.backend().clone()
    }

    fn status() -> Status {
        Status {
            model: "SmolLM2-135M".into(),
            mode: "ape T=0.9 S=0.9".into(),
            files: 4,
            chunks: 10,
            ..Status::default()
        }
    }

    fn answered() -> Model {
        let sources = vec![
            SourceView {
                path: "backup-policy.md".into(),
                lines: (18, 23),
                heading: "Backup and Restore Policy › Retention".into(),
                preview: "Nightly snapshots are kept for 35 days.\nMonthly snapshots are kept for 13 months.".into(),
                place: None,
                editable: true,
            },
            SourceView { path: "handbook.pdf".into(), lines: (1, 9), heading: String::new(), preview: String::new(), place: Some("pp. 3–4".into()), editable: false },
        ];
        let turn = Turn {
            question: "How long are nightly snapshots kept?".into(),
            answer: "Nightly snapshots are kept for **35 days**.\n- monthly: 13 months".into(),
            sources,
            ..Turn::default()
        };
        let mut m = Model::new(vec![turn], status());
        m.status.last_ttft_ms = Some(231.0);
        m.status.last_tokens_per_s = Some(24.5);
        m
    }

    #[test]
    fn a_new_conversation_is_marked_and_pgup_scrolls_back() {
        let mut m = answered();
        for (i, q) in ["And monthly ones?", "And weekly ones?"].iter().enumerate() {
            m.turns.push(Turn {
                question: q.to_string(),
                answer: format!("Answer {i}.\nSecond line.\nThird line."),
                starts_conversation: i == 0,
                ..Turn::default()
            });
        }
        m.fresh = true;
        insta::assert_snapshot!("conversation_latest", screen(&m, 100, 14));
        // PgUp: the first turn at the top, the rest below.
        m.selected = Some(0);
        insta::assert_snapshot!("conversation_scrolled_back", screen(&m, 100, 14));
    }

    #[test]
    fn empty_state() {
        insta::assert_snapshot!(screen(&Model::new(vec![], status()), 100, 16));
    }

    #[test]
    fn answering_streams_a_partial_answer() {
        let mut m = Model::new(vec![], status());
        m.turns.push(Turn {
            question: "Who approves exceptions?".into(),
            answer: "Priya Raman appr".into(),
            streaming: true,
            ..Turn::default()
        });
        m.busy = true;
        insta::assert_snapshot!(screen(&m, 100, 16));
    }

    #[test]
    fn answer_with_sources_pane() {
        insta::assert_snapshot!(screen(&answered(), 100, 18));
    }

    #[test]
    fn help_overlay() {
        let mut m = answered();
        m.help = true;
        insta::assert_snapshot!(screen(&m, 100, 18));
    }

    #[test]
    fn help_lists_the_files_not_indexed() {
        let mut m = answered();
        m.help = true;
        m.skipped = vec![
            (
                "scans/bomb.pdf".into(),
                "PDF streams inflate to more than 67 MB (a decompression bomb?): not read".into(),
            ),
            (
                "old/budget.doc".into(),
                "Office 97–2003 format (.doc): save it as .docx to index it".into(),
            ),
        ];
        insta::assert_snapshot!(screen(&m, 100, 24));
    }

    #[test]
    fn narrow_terminal_hides_sources_and_wraps() {
        insta::assert_snapshot!(screen(&answered(), 40, 16));
    }

    #[test]
    fn wrap_never_exceeds_the_width() {
        for l in wrap("a verylongwordthatdoesnotfit in a narrow column", 8) {
            assert!(l.chars().count() <= 8, "{l:?}");
        }
    }
}
