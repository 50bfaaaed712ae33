//! `--embed-model`: routing by meaning from the command line, and what a broken folder does.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

mod common;

use common::waypoint;

const TOOLS: &str = "tools:
  - name: list_directory
    description: Get a detailed listing of all files and directories in a specified path.
  - name: read_text_file
    description: Read the complete contents of a file from the file system as text.
  - name: create_entities
    description: Create multiple new entities in the knowledge graph
";

/// The sentence encoder the tests that need one use (scripts/test installs it); `None`,
/// and a note, where it is not set, unless CI requires it.
fn test_model() -> Option<std::ffi::OsString> {
    let model = std::env::var_os("WAYPOINT_TEST_EMBED_MODEL");
    if model.is_none() {
        assert!(
            std::env::var_os("WAYPOINT_REQUIRE_EMBED").is_none(),
            "WAYPOINT_REQUIRE_EMBED is set but WAYPOINT_TEST_EMBED_MODEL is not (scripts/test sets it)"
        );
        eprintln!("skipped: WAYPOINT_TEST_EMBED_MODEL is not set (scripts/embed-model install)");
    }
    model
}

/// The entry `route --json` recommends for the first clause, after a successful run.
fn recommended(out: &std::process::Output) -> Option<String> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["clauses"][0]["recommendation"]["id"]
        .as_str()
        .map(str::to_string)
}

fn catalog() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mcp.yaml"), TOOLS).unwrap();
    dir
}

#[test]
fn a_missing_model_folder_is_one_warning_and_a_model_free_plan() {
    let dir = catalog();
    let out = waypoint(&[
        "route",
        "read the file notes.txt",
        "--catalog",
        dir.path().to_str().unwrap(),
        "--embed-model",
        "/nonexistent/model",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("meaning-level matching is off").count(),
        1,
        "{err}"
    );
    assert!(err.contains("/nonexistent/model/config.json"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("read_text_file"), "{text}");
}

#[test]
fn with_a_model_a_request_finds_its_tool_by_meaning() {
    let Some(model) = test_model() else {
        return;
    };
    let dir = catalog();
    let args = |with: bool| {
        let mut a = vec![
            "route".to_string(),
            "show me what's in the folder".to_string(),
            "--json".to_string(),
            "--catalog".to_string(),
            dir.path().display().to_string(),
        ];
        if with {
            a.push("--embed-model".into());
            a.push(model.to_string_lossy().into_owned());
        }
        a
    };
    let best = |with: bool| {
        let a = args(with);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        recommended(&waypoint(&refs))
    };
    // "folder" is a synonym of "directory" in the vocabulary, so the words find it too;
    // meaning must not lose what the words find.
    assert_eq!(best(false).as_deref(), Some("list_directory"));
    assert_eq!(best(true).as_deref(), Some("list_directory"));
}

#[test]
fn an_empty_environment_variable_turns_meaning_off_quietly() {
    let dir = catalog();
    let out = common::command(&[
        "route",
        "read the file notes.txt",
        "--catalog",
        dir.path().to_str().unwrap(),
    ])
    .env("WAYPOINT_EMBED_MODEL", "")
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("meaning"));
}

/// Three entries, twenty requests each that ask for one entry: enough for the trained
/// router to lead the score (docs/routing.md, "Requests").
const TAUGHT: &[(&str, &[&str])] = &[
    (
        "weather",
        &[
            "will it rain tomorrow",
            "what's the forecast for the weekend",
            "is it going to be sunny today",
            "how cold is it outside",
            "do i need an umbrella today",
            "what is the temperature in paris",
            "will it snow this week",
            "how hot will it be on friday",
            "is there a storm coming",
            "what's the weather like in boston",
            "tell me the humidity right now",
            "will there be wind this afternoon",
            "is it cloudy in london",
            "weather report for tonight",
            "how warm is it in madrid",
            "should i expect showers later",
            "what will the high be tomorrow",
            "is it freezing out there",
            "any chance of hail today",
            "forecast for seattle",
        ],
    ),
    (
        "play_music",
        &[
            "play some jazz",
            "put on my workout playlist",
            "i want to hear taylor swift",
            "start the beatles album",
            "play the next song",
            "queue up some rock music",
            "play relaxing piano",
            "can you play radiohead",
            "shuffle my favourites",
            "play the latest hits",
            "put some music on",
            "play classical music in the kitchen",
            "i'd like to listen to adele",
            "start my road trip mix",
            "play that song again",
            "turn on some blues",
            "play lo-fi beats",
            "let me hear the new drake track",
            "play music by queen",
            "resume my playlist",
        ],
    ),
    (
        "set_alarm",
        &[
            "wake me up at 7",
            "set an alarm for 6 30",
            "alarm at noon please",
            "i need to get up at 5 tomorrow",
            "set a wake up call for 8",
            "make an alarm for monday at 9",
            "wake me in two hours",
            "set my alarm for half past six",
            "alarm for 7 am on weekdays",
            "get me up at dawn",
            "create an alarm for 10 pm",
            "remind me to wake at 6",
            "set an alarm called gym for 5 45",
            "wake me up early tomorrow",
            "new alarm at 11",
            "alarm in thirty minutes",
            "set the alarm for sunrise",
            "i have to be up by 4",
            "schedule an alarm at 7 15",
            "wake me before my flight at 6",
        ],
    ),
];

/// `waypoint ARGS`, with `--embed-model MODEL` when one is given, its caches in `cache`.
fn run_in(cache: &std::path::Path, args: &[&str], model: Option<&str>) -> std::process::Output {
    let mut args = args.to_vec();
    if let Some(model) = model {
        args.extend(["--embed-model", model]);
    }
    common::command(&args)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap()
}

/// A catalog of the three taught entries and a `--train` file of [`TAUGHT`].
fn taught_catalog() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tools.yaml"),
        "tools:\n  - name: weather\n    description: Current conditions and forecast\n  \
         - name: play_music\n    description: Start playback\n  \
         - name: set_alarm\n    description: Schedule a wake-up\n",
    )
    .unwrap();
    let train = dir.path().join("train.jsonl");
    let lines: Vec<String> = TAUGHT
        .iter()
        .flat_map(|(tool, requests)| {
            requests.iter().enumerate().map(move |(i, r)| {
                serde_json::json!({"id": format!("{tool}-{i}"), "request": r,
                    "expect": {"tools": [tool]}})
                .to_string()
            })
        })
        .collect();
    std::fs::write(&train, lines.join("\n")).unwrap();
    (dir, train)
}

#[test]
fn where_requests_ask_for_one_entry_each_training_adds_a_network_over_what_it_can_read() {
    let Some(model) = test_model() else {
        return;
    };
    let (dir, train) = taught_catalog();
    let cache = tempfile::tempdir().unwrap();
    let report = |with: bool| {
        let model = with.then(|| model.to_str().unwrap());
        let args = [
            "train",
            train.to_str().unwrap(),
            "--catalog",
            dir.path().to_str().unwrap(),
        ];
        let text = run_in(cache.path(), &args, model);
        let json = run_in(cache.path(), &[&args[..], &["--json"]].concat(), model);
        assert!(
            json.status.success(),
            "{}",
            String::from_utf8_lossy(&json.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        (String::from_utf8_lossy(&text.stdout).into_owned(), v)
    };
    let (text, v) = report(true);
    // The network ranks by the encoder's readings better than the linear model does, but
    // its softmax is not calibrated: it takes more of the ranking than of how sure.
    assert_eq!(v["network_share"], 0.7);
    assert_eq!(v["network_sure_share"], 0.4);
    // MiniLM's probe: the sentence vector and two earlier layers, 384 values each.
    assert_eq!(v["network_inputs"], 1152);
    assert_eq!(v["network_reads"], "encoder");
    assert!(
        text.contains(
            "network      a network over the encoder's readings (1152 values a request) gives 70% of the router's probability in ranking the entries and 40% in how sure it is"
        ),
        "{text}"
    );
    // Without the model the network reads the built-in static word vectors.
    let (text, v) = report(false);
    assert_eq!(v["network_reads"], "word_vectors");
    assert_eq!(v["network_inputs"], 128);
    // Over the pieces in context it ranks about as well as the linear model: one share.
    assert_eq!(v["network_share"], 0.5);
    assert_eq!(v["network_sure_share"], 0.5);
    assert!(
        text.contains("a network over the static word vectors (128 values a request) gives 50% of the router's probability (docs"),
        "{text}"
    );
}

#[test]
fn where_the_router_leads_a_request_close_to_no_taught_request_is_a_gap() {
    let Some(model) = test_model() else {
        return;
    };
    let (dir, train) = taught_catalog();
    let cache = tempfile::tempdir().unwrap();
    let best = |request: &str, with: bool| {
        let args = [
            "route",
            request,
            "--json",
            "--catalog",
            dir.path().to_str().unwrap(),
            "--train",
            train.to_str().unwrap(),
        ];
        recommended(&run_in(
            cache.path(),
            &args,
            with.then(|| model.to_str().unwrap()),
        ))
    };
    // The words alone make a guess of an unrelated request (a taught alarm request says
    // "two"); the taught requests closest in meaning are all far from it, so with the
    // model it is a gap.
    assert_eq!(
        best("book me a table for two", false).as_deref(),
        Some("set_alarm")
    );
    assert_eq!(best("book me a table for two", true), None);
    assert_eq!(best("i want to order a pizza", true), None);
    // A request phrased like none of the taught ones but close to them in meaning still
    // finds its entry.
    assert_eq!(best("rouse me at six", true).as_deref(), Some("set_alarm"));
    assert_eq!(
        best("blast some tunes", true).as_deref(),
        Some("play_music")
    );
}
