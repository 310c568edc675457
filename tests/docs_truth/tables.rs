//! The Markdown tables of every page render as tables: each starts with a header row and a
//! separator row of as many cells, each of its rows has that many cells, and no row-like line
//! (one that starts with `|`) stands outside a table, which is what the rows after a paragraph
//! or a blank line written inside a table become: raw text with pipes. GitHub's rules (GFM):
//! a table ends at a blank line, cells are split at every `|` not escaped as `\|` (inside code
//! spans too), and a header and separator of different widths are no table at all.

use std::path::{Path, PathBuf};

/// The cells of a table line: split at each unescaped `|`, one leading and one trailing pipe
/// taken off.
fn cells(line: &str) -> Vec<String> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let line = match line.strip_suffix('|') {
        Some(inner) if !inner.ends_with('\\') => inner,
        _ => line,
    };
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for c in line.chars() {
        if c == '|' && !escaped {
            cells.push(String::new());
        } else {
            cells.last_mut().unwrap().push(c);
        }
        escaped = c == '\\' && !escaped;
    }
    cells
}

/// Whether `line` is a table's separator row (`|---|:--:|`).
fn separator(line: &str) -> bool {
    let line = line.trim();
    line.contains('-')
        && line.contains('|')
        && cells(line).iter().all(|cell| {
            let cell = cell.trim();
            let inner = cell.trim_start_matches(':').trim_end_matches(':');
            !inner.is_empty() && inner.chars().all(|c| c == '-')
        })
}

/// The problems of the tables of one page, as `name:line: problem`.
pub fn problems(name: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut fence: Option<&str> = None;
    // The width of the table being read (its header's cells), while in one.
    let mut table: Option<usize> = None;
    let mut n = 0;
    while n < lines.len() {
        let line = lines[n];
        let trimmed = line.trim_start();
        let at = n + 1;
        n += 1;
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            table = None;
            continue;
        }
        if trimmed.is_empty() {
            table = None;
            continue;
        }
        if let Some(width) = table {
            if !trimmed.starts_with('|') {
                found.push(format!(
                    "{name}:{at}: a line inside a table that is not a row (rendered as a \
                     one-cell row; leave a blank line after the table)"
                ));
            } else if cells(trimmed).len() != width {
                found.push(format!(
                    "{name}:{at}: a row of {} cells in a table of {width} columns",
                    cells(trimmed).len()
                ));
            }
            continue;
        }
        if !trimmed.starts_with('|') {
            continue;
        }
        match lines.get(n) {
            Some(next) if separator(next) => {
                let width = cells(trimmed).len();
                if cells(next).len() != width {
                    found.push(format!(
                        "{name}:{at}: a header of {width} cells over a separator of {}: not \
                         rendered as a table",
                        cells(next).len()
                    ));
                }
                table = Some(width);
                n += 1;
            }
            _ => found.push(format!(
                "{name}:{at}: a table row outside any table (rendered as text): a blank line \
                 or a paragraph inside the table above, or a missing header and separator"
            )),
        }
    }
    found
}

/// Every Markdown file of the repository (`target/` and hidden folders left out).
pub fn markdown_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                markdown_files(&path, into);
            }
        } else if name.ends_with(".md") {
            into.push(path);
        }
    }
}

#[test]
fn every_table_of_every_page_renders_as_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = Vec::new();
    markdown_files(root, &mut pages);
    pages.sort();
    assert!(
        pages.len() >= 20,
        "only {} Markdown files found",
        pages.len()
    );
    let mut found = Vec::new();
    let mut tables = 0;
    for path in &pages {
        let name = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        tables += text.lines().filter(|l| separator(l)).count();
        found.extend(problems(&name, &text));
    }
    assert!(found.is_empty(), "broken tables:\n{}", found.join("\n"));
    assert!(tables >= 50, "only {tables} tables found");
}

/// The guard itself: a paragraph inside a table, a row with a cell too many and a header wider
/// than its separator fail, naming the page and line; a sound table, pipes escaped or in a
/// fenced block pass.
#[test]
fn a_broken_table_fails_naming_page_and_line() {
    let sound = "text\n\n| a | b |\n|---|:-:|\n| `x\\|y` | 2 |\n|3|4|\n\nafter\n\n```\n| not | a table\n```\n";
    assert_eq!(problems("p.md", sound), Vec::<String>::new());
    let broken = "| a | b |\n|---|---|\n| 1 | 2 |\n\nA paragraph inside.\n\n| 3 | 4 |\n| 5 | 6 |\n";
    let found = problems("docs/p.md", broken);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("docs/p.md:7: a table row outside any table"));
    assert!(found[1].starts_with("docs/p.md:8: a table row outside any table"));
    let glued = "| a | b |\n|---|---|\n| 1 | 2 |\nA paragraph glued to it.\n";
    assert!(problems("p.md", glued)[0].starts_with("p.md:4: a line inside a table"));
    let wide = "| a | b |\n|---|---|\n| 1 | 2 | 3 |\n| `x|y` | 2 |\n";
    let found = problems("p.md", wide);
    assert!(found[0].starts_with("p.md:3: a row of 3 cells in a table of 2 columns"));
    assert!(
        found[1].starts_with("p.md:4: a row of 3 cells"),
        "{found:?}"
    );
    let headless = "| a | b | c |\n|---|---|\n";
    assert!(problems("p.md", headless)[0].starts_with("p.md:1: a header of 3 cells"));
}
