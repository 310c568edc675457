//! The examples' command lines: a few known words, and an error on anything else (a mistyped
//! `--publik` is refused rather than ignored).

/// The command line's arguments (the program's name left out) when each is one of `known`,
/// or one of at most `free` other words that do not start with `-` (a secret, say); else
/// what is wrong, naming the argument.
pub fn arguments(known: &[&str], free: usize) -> Result<Vec<String>, String> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let mut others = 0;
    for argument in &arguments {
        if known.contains(&argument.as_str()) {
            continue;
        }
        others += 1;
        if argument.starts_with('-') || others > free {
            let accepted = if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            };
            return Err(format!(
                "unknown argument {argument:?} (accepted: {accepted})"
            ));
        }
    }
    Ok(arguments)
}
