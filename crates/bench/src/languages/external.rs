//! The languages scenario's other clients: the save-loop programs run as child processes (their
//! command, an optional build made once before anything is timed), one turn of one of them, and
//! the JSON line of microsecond timings each prints.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::LanguagesEffort;
use crate::BoxError;

/// A client measured by running one of its programs: `command` plus the save-loop flags, after
/// `build` (if any) has made the program once.
#[derive(Clone, Debug)]
pub struct ExternalClient {
    pub name: String,
    pub command: Vec<String>,
    pub build: Option<Vec<String>>,
}

impl ExternalClient {
    /// The save-loop programs in this repository: Python's (with `python`, which must import
    /// the `checkpointd` package), TypeScript's (compiled by the package's `npm test` build) and
    /// Go's (built by `go build` into the temporary folder), the last two also as `ts-floor` and
    /// `go-floor`: the same work on a bare `node:http2` session or grpc-go stub.
    pub fn in_repository(python: &str, node: &str) -> Vec<Self> {
        let root = repository_root();
        let typescript = path_text(&root.join("clients/typescript/dist-test/bench/save-loop.js"));
        let go_program = path_text(&std::env::temp_dir().join(format!(
            "checkpointd-bench-go-save-loop-{}",
            std::process::id()
        )));
        let go_build = vec![
            "go".to_owned(),
            "-C".to_owned(),
            path_text(&root.join("clients/go")),
            "build".to_owned(),
            "-o".to_owned(),
            go_program.clone(),
            GO_SAVE_LOOP_PACKAGE.to_owned(),
        ];
        let external = |name: &str, command: Vec<String>, build: Option<&Vec<String>>| Self {
            name: name.to_owned(),
            command,
            build: build.cloned(),
        };
        let python_loop = path_text(&root.join("clients/python/bench/save_loop.py"));
        vec![
            external("python", vec![python.to_owned(), python_loop], None),
            external(
                "typescript",
                vec![node.to_owned(), typescript.clone()],
                None,
            ),
            // The same work on a bare node:http2 session: what Node costs before any client.
            external(
                "ts-floor",
                vec![node.to_owned(), typescript, FLOOR.to_owned()],
                None,
            ),
            external("go", vec![go_program.clone()], Some(&go_build)),
            // The same work on a bare generated stub: what grpc-go costs before the client.
            external(
                "go-floor",
                vec![go_program, FLOOR.to_owned()],
                Some(&go_build),
            ),
        ]
    }
}

/// The Go save-loop program's package, relative to clients/go.
const GO_SAVE_LOOP_PACKAGE: &str = "./bench/save-loop";
const FLOOR: &str = "--floor";

/// Runs each distinct build command of the clients once, before anything is timed.
pub(super) async fn build_programs(external: &[ExternalClient]) -> Result<(), BoxError> {
    let mut done: Vec<&Vec<String>> = Vec::new();
    for build in external.iter().filter_map(|client| client.build.as_ref()) {
        if done.contains(&build) {
            continue;
        }
        let (program, args) = build.split_first().ok_or("an empty build command")?;
        let output = tokio::process::Command::new(program)
            .args(args)
            .output()
            .await
            .map_err(|error| format!("{}: {error}", build.join(" ")))?;
        if !output.status.success() {
            return Err(format!(
                "{} exited with {}: {}",
                build.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        done.push(build);
    }
    Ok(())
}

/// The programs the builds made (each built client's executable), removed when dropped, so a
/// failed build or round leaves nothing in the temporary folder either.
pub(super) struct BuiltPrograms<'a>(pub(super) &'a [ExternalClient]);

impl Drop for BuiltPrograms<'_> {
    fn drop(&mut self) {
        for client in self.0.iter().filter(|client| client.build.is_some()) {
            if let Some(program) = client.command.first() {
                let _ = std::fs::remove_file(program);
            }
        }
    }
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}
/// One external program's turn: its flags, its one JSON line of microsecond latencies.
pub(super) async fn run_external(
    client: &ExternalClient,
    target: &str,
    run_id: &str,
    state_file: &Path,
    effort: LanguagesEffort,
) -> Result<(Vec<Duration>, Vec<Duration>), BoxError> {
    let (program, args) = client
        .command
        .split_first()
        .ok_or("an external client needs a command")?;
    let output = tokio::process::Command::new(program)
        .args(args)
        .args(["--target", target, "--run", run_id])
        .arg("--state-file")
        .arg(state_file)
        .args(["--iterations", &effort.iterations.to_string()])
        .args(["--warmup", &effort.warmup.to_string()])
        .output()
        .await
        .map_err(|error| format!("{} ({}): {error}", client.name, client.command.join(" ")))?;
    if !output.status.success() {
        return Err(format!(
            "{} exited with {}: {}",
            client.name,
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let stdout = String::from_utf8(output.stdout)?;
    let line = stdout
        .lines()
        .rev()
        .find(|line| line.starts_with('{'))
        .ok_or_else(|| format!("{} printed no JSON line: {stdout}", client.name))?;
    Ok((micros(line, "save_us")?, micros(line, "load_us")?))
}

/// The array of microsecond integers named `key` in the program's JSON line.
fn micros(line: &str, key: &str) -> Result<Vec<Duration>, BoxError> {
    let parsed: serde_json::Value = serde_json::from_str(line)?;
    let items = parsed[key]
        .as_array()
        .ok_or_else(|| format!("no array {key} in {line}"))?;
    items
        .iter()
        .map(|item| {
            item.as_u64()
                .map(Duration::from_micros)
                .ok_or_else(|| format!("{key} holds {item}, not microseconds").into())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_reads_each_named_array() {
        let line = r#"{"save_us":[120, 95,300],"load_us":[]}"#;
        assert_eq!(
            micros(line, "save_us").unwrap(),
            [120, 95, 300].map(Duration::from_micros)
        );
        assert!(micros(line, "load_us").unwrap().is_empty());
        assert!(micros(line, "other_us").is_err());
    }

    #[test]
    fn go_contenders_run_the_program_their_shared_build_makes() {
        let external = ExternalClient::in_repository("python3", "node");
        let go: Vec<_> = external
            .iter()
            .filter(|client| client.name.starts_with("go"))
            .collect();
        assert_eq!(go.len(), 2);
        let build = go[0].build.as_ref().unwrap();
        assert_eq!(go[1].build.as_ref(), Some(build));
        // go -C <clients/go> build -o <program> ./bench/save-loop: the folder holds the program.
        let folder = Path::new(&build[2]).join(GO_SAVE_LOOP_PACKAGE);
        assert!(folder.join("main.go").is_file(), "{}", folder.display());
        let output = &build[build.iter().position(|arg| arg == "-o").unwrap() + 1];
        assert!(go.iter().all(|client| &client.command[0] == output));
        assert_eq!(go[1].command[1..], [FLOOR]);
    }
}
