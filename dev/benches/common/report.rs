//! The ratio lines every bench prints next to its own output, in one format:
//!
//! ```text
//! ratio engine/serde-only GET /products: 1.78x (goal <= 3x: met)
//! ratio engine/bare GET /api/v1/me (32 conns): 64.0% (goal >= 60%: met)
//! ratio store/raw place_order sqlite: 1.13x (no goal: reported only)
//! ```
//!
//! For the criterion benches the figures come from criterion's own files: after the groups
//! ran, [`Estimates::ratio`] reads `<criterion home>/<group>/.../new/estimates.json` of both
//! benches of a pair (the estimate criterion prints as `time:`: the slope when it has one, the
//! mean otherwise) and prints the line. Only files written by this run count, so a bench left
//! out by a filter prints `not measured in this run` instead of an old figure.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

/// What a ratio is aimed at.
#[derive(Clone, Copy, Debug)]
pub enum Goal {
    /// At most this many times its baseline (`Times` ratios: lower is better).
    AtMost(f64),
    /// At least this share of its baseline, percent (`Percent` ratios: higher is better).
    AtLeast(f64),
    /// No goal: the ratio is reported only.
    None,
}

/// How a ratio is written.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    /// `1.78x`: time against the baseline's time.
    Times,
    /// `64.0%`: throughput as a share of the baseline's throughput.
    Percent,
}

impl Unit {
    fn show(self, value: f64) -> String {
        match self {
            Unit::Times => format!("{value:.2}x"),
            Unit::Percent => format!("{:.1}%", value * 100.0),
        }
    }

    fn bound(self, value: f64) -> String {
        match self {
            Unit::Times => format!("{value}x"),
            Unit::Percent => format!("{value}%"),
        }
    }
}

/// Whether `ratio` (a plain quotient: 0.64 for 64%) meets `goal`; `None` when there is no goal.
pub fn met(ratio: f64, goal: Goal) -> Option<bool> {
    match goal {
        Goal::AtMost(bound) => Some(ratio <= bound),
        Goal::AtLeast(percent) => Some(ratio * 100.0 >= percent),
        Goal::None => None,
    }
}

/// The line for `label` at `ratio` (a plain quotient: 0.64 for 64%, 1.78 for 1.78x).
pub fn line(label: &str, ratio: f64, unit: Unit, goal: Goal) -> String {
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    let goal = match goal {
        Goal::AtMost(bound) => {
            format!("goal <= {}: {}", unit.bound(bound), verdict(ratio <= bound))
        }
        Goal::AtLeast(percent) => format!(
            "goal >= {}: {}",
            unit.bound(percent),
            verdict(ratio * 100.0 >= percent)
        ),
        Goal::None => "no goal: reported only".to_owned(),
    };
    format!("ratio {label}: {} ({goal})", unit.show(ratio))
}

/// Prints [`line`].
pub fn ratio(label: &str, ratio: f64, unit: Unit, goal: Goal) {
    println!("{}", line(label, ratio, unit, goal));
}

/// Runs criterion's groups as `criterion_main!` does, then returns the estimates they wrote.
pub fn run_criterion(groups: &[fn()]) -> Estimates {
    let since = SystemTime::now();
    for group in groups {
        group();
    }
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
    Estimates {
        home: criterion_home(),
        since,
    }
}

/// Where criterion writes its files: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`,
/// else the target directory cargo reports, else `target/criterion` (criterion's own order).
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    // `cargo bench` runs the bench from the package root with the target directory above the
    // executable (`<target>/release/deps/<bench>-<hash>`).
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(|t| t.join("criterion")))
        .filter(|home| home.is_dir())
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

/// The estimates criterion wrote in this run.
pub struct Estimates {
    home: PathBuf,
    since: SystemTime,
}

impl Estimates {
    /// Prints the line of `numerator` against `denominator`, two benchmarks of criterion group
    /// `group` named as in the bench (`"price/10"` for `BenchmarkId::new("price", 10)`,
    /// `"get_products_25/handle"` for `bench_function("get_products_25/handle", ..)`).
    /// Nothing is printed when neither was measured in this run (a filter left both out, or
    /// criterion ran in `--test` / `--list` mode).
    pub fn ratio(&self, label: &str, group: &str, numerator: &str, denominator: &str, goal: Goal) {
        match (self.nanos(group, numerator), self.nanos(group, denominator)) {
            (Some(n), Some(d)) => ratio(label, n / d, Unit::Times, goal),
            (None, None) => {}
            _ => println!("ratio {label}: not measured in this run"),
        }
    }

    /// The estimate of `group/bench` in nanoseconds, when this run wrote it.
    fn nanos(&self, group: &str, bench: &str) -> Option<f64> {
        let full_id = format!("{group}/{bench}");
        let dir = find_benchmark(&self.home.join(safe(group)), &full_id, 3)?;
        let file = dir.join("estimates.json");
        let written = std::fs::metadata(&file).and_then(|m| m.modified()).ok()?;
        if written < self.since {
            return None;
        }
        let estimates: Value = serde_json::from_slice(&std::fs::read(&file).ok()?).ok()?;
        ["slope", "mean"]
            .iter()
            .find_map(|k| estimates[k]["point_estimate"].as_f64())
    }
}

/// Criterion's directory name for one part of an id (its `make_filename_safe`, minus the
/// truncation of very long names, which the lookup by `full_id` does not need).
fn safe(part: &str) -> String {
    part.replace(['?', '"', '/', '\\', '*', '<', '>', ':', '|', '^'], "_")
}

/// The `new` directory under `dir` (at most `depth` levels down) whose `benchmark.json` has
/// `full_id`.
fn find_benchmark(dir: &Path, full_id: &str, depth: usize) -> Option<PathBuf> {
    let new = dir.join("new");
    if let Ok(bytes) = std::fs::read(new.join("benchmark.json"))
        && let Ok(benchmark) = serde_json::from_slice::<Value>(&bytes)
        && benchmark["full_id"].as_str() == Some(full_id)
    {
        return Some(new);
    }
    if depth == 0 {
        return None;
    }
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != "new")
        .find_map(|e| find_benchmark(&e.path(), full_id, depth - 1))
}
