//! Each stage pinned on small inputs: segmentation, extraction, goals, clarity, routing.

use crate::{engine, tools};

fn clauses(request: &str) -> Vec<String> {
    engine()
        .understand(request, None)
        .unwrap()
        .clauses
        .into_iter()
        .map(|c| c.text)
        .collect()
}

#[test]
fn sequencers_and_coordinated_verbs_split_clauses() {
    assert_eq!(
        clauses("show me what changed and then run the tests"),
        ["show me what changed", "run the tests"]
    );
    assert_eq!(
        clauses("remember this launch, write a blog about it, then make an illustration"),
        [
            "remember this launch",
            "write a blog about it",
            "make an illustration"
        ]
    );
    assert_eq!(
        clauses("fetch it; translate it\nfinally email it"),
        ["fetch it", "translate it", "email it"]
    );
    assert_eq!(
        clauses("1. read the file\n2. summarize it"),
        ["read the file", "summarize it"]
    );
}

#[test]
fn a_condition_after_and_is_a_request_of_its_own() {
    assert_eq!(
        clauses("run the tests and if they fail open an issue"),
        ["run the tests", "if they fail open an issue"]
    );
    // Nothing in the built-in catalog opens issues: the second half is a gap, not lost.
    assert_eq!(
        tools("run the tests and if they fail open an issue"),
        ["run_tests", "unknown"]
    );
}

#[test]
fn the_period_of_an_abbreviation_ends_no_sentence() {
    assert_eq!(
        clauses("find flights to st. louis on monday").len(),
        1,
        "an abbreviation before a lower-case word"
    );
    assert_eq!(
        clauses("read the file. summarize it"),
        ["read the file", "summarize it"]
    );
    // Before a capital it may end one ("… pears etc. Then email it").
    assert_eq!(clauses("buy apples, pears etc. Then email it").len(), 2);
    // A letter after a letter and a period is an initialism, listed or not.
    assert_eq!(
        clauses("set an alarm for 9 a.m. tomorrow").len(),
        1,
        "“a.m.” before a lower-case word"
    );
    assert_eq!(clauses("wake me at 9 a.m. Then email me").len(), 2);
}

#[test]
fn and_inside_a_noun_phrase_never_splits() {
    assert_eq!(
        clauses("summarize the terms and conditions PDF at https://example.com/tc.pdf").len(),
        1
    );
    assert_eq!(
        clauses("write a blog post about salt and pepper shakers").len(),
        1
    );
}

#[test]
fn a_relative_clause_keeps_its_coordinated_verbs() {
    let c = clauses(
        "create an agent that checks my saved search every morning and emails me new results",
    );
    assert_eq!(c.len(), 1, "{c:?}");
}

#[test]
fn a_bare_verb_after_a_relative_clause_starts_a_request_of_its_own() {
    assert_eq!(
        clauses("book a table at a diner that serves pancakes, play some jazz"),
        [
            "book a table at a diner that serves pancakes",
            "play some jazz"
        ]
    );
    // An inflected verb carries the description on; after "and", a bare one whose object
    // points back may too.
    assert_eq!(
        clauses("find a diner that serves pancakes, opens early and delivers").len(),
        1
    );
    assert_eq!(
        clauses("create an agent that watches the feed and run it every Friday").len(),
        1
    );
    // After "and", a bare verb acting on something new (an article, a person) asks again.
    assert_eq!(
        clauses("find a bus that goes to Boston and get me a ticket for it"),
        ["find a bus that goes to Boston", "get me a ticket for it"]
    );
    assert_eq!(
        clauses("find a diner that serves tacos and reserve a table for 4"),
        ["find a diner that serves tacos", "reserve a table for 4"]
    );
    // "that" opening a statement with a subject of its own ("the code is 8812"): a bare
    // verb after "and", its particle before the object, asks again.
    assert_eq!(
        clauses("jot down that the printer code is 8812 and turn off the lights"),
        [
            "jot down that the printer code is 8812",
            "turn off the lights"
        ]
    );
}

#[test]
fn a_list_opened_by_with_keeps_an_item_named_by_a_verb() {
    // After "with the name 'Ana'", "email '…'" names the next value, not a new request.
    assert_eq!(
        clauses("add a contact with the name 'Ana', email 'ana@example.com', and phone '555-0100'")
            .len(),
        1
    );
    // A name compared with its value is one more item whatever its form.
    assert_eq!(
        clauses("find films with genre 'Drama' and rating greater than or equal to 7").len(),
        1
    );
    // Without a list opened, the verb before a value still asks for something.
    assert_eq!(
        clauses("read the file 'notes.txt', email 'ana@example.com' the summary").len(),
        2
    );
}

#[test]
fn clause_spans_point_into_the_request() {
    let request = "Fetch https://a.io/x.html, then translate it into Spanish.";
    for c in engine().understand(request, None).unwrap().clauses {
        assert_eq!(&request[c.span.start..c.span.end], c.text);
    }
}

#[test]
fn a_clause_that_ends_in_a_quotation_keeps_its_closing_quote() {
    assert_eq!(
        clauses("read the file 'notes.txt' and then summarize \"it all\""),
        ["read the file 'notes.txt'", "summarize \"it all\""]
    );
}

#[test]
fn presentational_clauses_feed_context_not_steps() {
    let u = engine()
        .understand(
            "here's a launch announcement; turn it into a blog post",
            None,
        )
        .unwrap();
    assert_eq!(u.clauses[0].role, waypoint_protocol::ClauseRole::Context);
    assert_eq!(u.goals.len(), 1);
}

#[test]
fn material_and_then_a_request_are_two_clauses() {
    let request = "I have a draft at notes/plan.md, and I'd like you to summarize it";
    assert_eq!(
        clauses(request),
        [
            "I have a draft at notes/plan.md",
            "I'd like you to summarize it"
        ]
    );
    let u = engine().understand(request, None).unwrap();
    assert_eq!(u.clauses[0].role, waypoint_protocol::ClauseRole::Context);
    // Without an opener, what follows "and" is more of the same material.
    assert_eq!(
        clauses("I have a draft and a few notes"),
        ["I have a draft and a few notes"]
    );
}

#[test]
fn a_label_and_its_value_after_a_request_fill_the_step_before() {
    use waypoint_protocol::ClauseRole;
    let request = "summarize the article. Link: https://example.com/a.pdf";
    let u = engine().understand(request, None).unwrap();
    let roles: Vec<ClauseRole> = u.clauses.iter().map(|c| c.role).collect();
    assert_eq!(roles, [ClauseRole::Action, ClauseRole::Context]);
    let plan = engine().plan(request, None).unwrap();
    let [step] = plan.steps() else {
        panic!("one step expected: {:?}", plan.steps());
    };
    assert_eq!(step.tool, "pdf_summarize");
    assert_eq!(step.args["source"], "https://example.com/a.pdf");
    // Words after the colon make it a sentence of its own, not a label.
    let u = engine()
        .understand(
            "summarize the article. Note: email it to ana@example.com",
            None,
        )
        .unwrap();
    assert!(u.clauses.iter().all(|c| c.role == ClauseRole::Action));
}

#[test]
fn extracted_values_cover_every_kind() {
    let u = engine()
        .understand("email ana@example.com the file docs/plan.md from example.com/x about JIRA-42 \"asap\" 3 times every Monday at 9am on 2026-01-02", None)
        .unwrap();
    let e = &u.extracted;
    assert_eq!(e.emails, ["ana@example.com"]);
    assert_eq!(e.paths, ["docs/plan.md"]);
    assert_eq!(e.urls, ["example.com/x"]);
    assert_eq!(e.ids, ["JIRA-42"]);
    assert_eq!(e.quoted, ["asap"]);
    assert_eq!(e.numbers, ["3"]);
    assert_eq!(e.schedules, ["every Monday at 9am"]);
    assert!(e.dates.contains(&"2026-01-02".to_string()), "{:?}", e.dates);
}

#[test]
fn context_payload_is_kept_and_mined() {
    let ctx = serde_json::json!({"paste": "see https://example.com/launch"});
    let u = engine()
        .understand("turn it into a blog post", Some(&ctx))
        .unwrap();
    assert_eq!(u.extracted.payload, Some(ctx));
    assert_eq!(u.extracted.urls, ["https://example.com/launch"]);
}

#[test]
fn goals_name_the_words_that_led_there() {
    let u = engine().understand("which files changed", None).unwrap();
    let g = &u.goals[0];
    assert_eq!(
        (g.intent.as_str(), g.entity.as_deref()),
        ("status", Some("git_working_tree"))
    );
    assert!(g.explanation.contains("changed"), "{}", g.explanation);
    assert!(g.confidence > 0.5 && g.confidence <= 1.0);
}

#[test]
fn making_a_thing_that_exists_do_more_changes_it_and_making_a_new_one_creates() {
    let intent = |request: &str| {
        let u = engine().understand(request, None).unwrap();
        u.goals[0].intent.clone()
    };
    assert_eq!(
        intent("make the support bot also answer in Spanish"),
        "modify"
    );
    assert_eq!(
        intent("make a support bot that answers in Spanish"),
        "create"
    );
}

#[test]
fn a_new_thing_is_not_what_an_entry_that_changes_its_own_kind_takes() {
    // "a haircut" is new and no entry's word: `update_workflow` changes an existing
    // workflow, so the verb it shares with the clause earns it no lead.
    let update = crate::score_of(
        engine(),
        "schedule a haircut for Saturday",
        "update_workflow",
    );
    let threshold = waypoint_core::Options::default().threshold;
    assert!(update < threshold, "update_workflow at {update}");
    // Nor is it what the entry that makes workflows makes: "schedule" is said of a
    // haircut, and the request is a gap.
    assert_eq!(tools("schedule a haircut for Saturday"), ["unknown"]);
    // A workflow it knows still is, made or changed.
    assert_eq!(
        tools("move the nightly workflow to 6am"),
        ["update_workflow"]
    );
    assert_eq!(
        tools("schedule a workflow that runs the agent every morning"),
        ["create_workflow"]
    );
}

#[test]
fn vague_requests_are_not_ready_and_say_what_to_ask() {
    for request in ["fix it", "do the thing from before", "make it better"] {
        let plan = engine().plan(request, None).unwrap();
        assert!(!plan.clarity().ready_to_formalize(), "{request}");
        assert!(!plan.clarity().missing_criteria().is_empty(), "{request}");
    }
    let plan = engine()
        .plan("summarize this PDF: https://example.com/report.pdf", None)
        .unwrap();
    assert!(plan.clarity().ready_to_formalize());
}

#[test]
fn evidence_rules_pick_deterministic_tools_in_order() {
    assert_eq!(tools("find CommandRouter"), ["find_symbol", "read_file"]);
    assert_eq!(
        tools("explain the architecture"),
        ["repo_discovery", "read_file"]
    );
    assert_eq!(tools("review my changes"), ["git_diff", "code_review"]);
}

#[test]
fn a_picture_of_how_something_is_organized_asks_to_make_nothing() {
    // "picture" is a word of the `image` group, as `create`'s "draw" is; it is no verb
    // of making (docs/architecture.md, "Vocabulary is data").
    assert_eq!(
        tools("give me a high level picture of how this repo is organized"),
        ["repo_discovery", "read_file"]
    );
    assert_eq!(tools("draw a picture of a lighthouse"), ["image_generate"]);
    // "laid out" says how it is organized; "laid" is no component's name.
    assert_eq!(
        tools("give me an overview of how this repo is laid out"),
        ["repo_discovery", "read_file"]
    );
}

#[test]
fn a_clause_that_says_what_not_to_do_plans_nothing() {
    use waypoint_protocol::ClauseRole;
    // "but" ends the clause before one that declines; the declined one is no request
    // for the tool it names, nor, read with the one before, a question about commits.
    assert_eq!(tools("run the tests but don't commit"), ["run_tests"]);
    assert_eq!(
        tools("run the tests and do not push anything"),
        ["run_tests"]
    );
    assert_eq!(
        tools("run the tests and then commit nothing, just tell me which files I changed"),
        ["run_tests", "git_status"]
    );
    let u = engine()
        .understand("run the tests, but never commit", None)
        .unwrap();
    let roles: Vec<ClauseRole> = u.clauses.iter().map(|c| c.role).collect();
    assert_eq!(roles, [ClauseRole::Action, ClauseRole::Declined]);
    // A request that only rules something out asks for nothing.
    assert!(tools("don't delete anything").is_empty());
    // "but" before a request of its own joins nothing: it is one clause.
    assert_eq!(
        clauses("run the tests but skip the slow ones"),
        ["run the tests but skip the slow ones"]
    );
}

#[test]
fn a_name_that_qualifies_another_thing_is_no_symbol_to_look_for() {
    // A run of names is a thing of the world; after "the", a name before a noun says
    // which one. Neither is a symbol for `find_symbol` to look for.
    assert_eq!(
        tools("find reviews of the Steam Deck OLED on the web"),
        ["web_search"]
    );
    assert_eq!(
        tools("get the GitHub token out of the vault"),
        ["get_vault_credential"]
    );
    // The name is still the symbol where the noun after it is a kind of symbol, or
    // where it stands alone.
    assert_eq!(
        tools("where is the SessionStore struct declared?"),
        ["find_symbol", "read_file"]
    );
    assert_eq!(
        tools("locate the TokenManager"),
        ["find_symbol", "read_file"]
    );
}

#[test]
fn finding_out_or_asking_about_what_the_step_before_did_adds_no_step() {
    // "find out why" asks what the clause before asks, not for a symbol; "what did it
    // say" asks for the step before's answer.
    assert_eq!(
        tools("the github actions run failed again, can you find out why?"),
        ["ci_status"]
    );
    assert_eq!(
        tools("who made the most recent commit and what did it say?"),
        ["git_log"]
    );
}

#[test]
fn a_question_in_the_progressive_asks_what_goes_on() {
    // "running" says what the session does; nothing is to be run.
    assert_eq!(
        tools("what backend is this session running on?"),
        ["session_info"]
    );
    assert_eq!(tools("which model are you running on"), ["session_info"]);
    assert_eq!(tools("run the tests"), ["run_tests"]);
}

#[test]
fn memory_named_with_no_verb_asks_to_recall() {
    assert_eq!(
        tools("what notes do you have on the hiring plan?"),
        ["memory_recall"]
    );
    // "savings" shares the stem of "save", not its meaning: it names no memory.
    let u = engine()
        .understand("deposit this check into my savings account", None)
        .unwrap();
    assert_eq!(u.goals[0].intent, "unknown");
}

#[test]
fn after_a_light_verb_the_noun_of_one_new_act_says_the_intent() {
    assert_eq!(
        tools("give my uncommitted work a code review"),
        ["git_diff", "code_review"]
    );
    assert_eq!(
        tools("the billing agent is too verbose, make its answers shorter"),
        ["improve_agent"]
    );
    assert_eq!(
        tools("I'm new here, how is this project put together?"),
        ["repo_discovery", "read_file"]
    );
}

#[test]
fn the_first_word_of_a_named_compound_is_no_verb() {
    // "working tree" names the entity; "working" asks nothing to be explained.
    assert_eq!(tools("is my working tree clean?"), ["git_status"]);
}

#[test]
fn an_opening_that_asks_to_be_told_sends_no_message() {
    assert_eq!(
        tools("tell me which language model powers you"),
        ["session_info"]
    );
}

#[test]
fn a_support_verb_means_the_act_its_noun_names() {
    assert_eq!(tools("make a release build"), ["run_build"]);
    assert_eq!(
        tools("make a new agent that triages tickets"),
        ["create_agent"]
    );
}

#[test]
fn a_condition_on_how_the_step_before_went_asks_for_nothing() {
    use waypoint_protocol::ClauseRole;
    assert_eq!(
        tools("build the project, and if it compiles, run the tests"),
        ["run_build", "run_tests"]
    );
    // A condition with a subject of its own is part of what is asked.
    let u = engine()
        .understand("if my card was stolen, where do i report it", None)
        .unwrap();
    assert!(u.clauses.iter().all(|c| c.role == ClauseRole::Action));
}

#[test]
fn a_word_echoing_the_step_before_takes_its_output() {
    let plan = engine()
        .plan(
            "put this into Spanish and email the translation to luis@example.com",
            None,
        )
        .unwrap();
    let steps = plan.steps();
    let tools: Vec<&str> = steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["translate_text", "email_send"]);
    assert_eq!(steps[1].input_refs, [steps[0].id.clone()]);
}

#[test]
fn another_intent_in_the_verbs_object_is_what_it_acts_on() {
    // "the last commit" is what "compare" compares, not a question about history.
    assert_eq!(
        tools("compare the last commit with the one before it"),
        ["git_diff"]
    );
    assert_eq!(tools("show me the last commit"), ["git_log"]);
}

#[test]
fn looking_over_and_summing_up_are_reviewing_and_summarizing() {
    // "look over" is no "look up": the review gathers the diff first.
    assert_eq!(tools("look over my changes"), ["git_diff", "code_review"]);
    assert_eq!(
        tools("look over what I've changed and point out bugs"),
        ["git_diff", "code_review"]
    );
    assert_eq!(
        tools("sum up the PDF at https://example.com/minutes.pdf"),
        ["pdf_summarize"]
    );
}

#[test]
fn a_light_verb_puts_a_thing_in_a_language() {
    assert_eq!(
        tools("download https://example.com/readme and put it in Swedish"),
        ["web_fetch", "translate_text"]
    );
}

#[test]
fn the_best_of_what_was_found_takes_it() {
    let plan = engine()
        .plan(
            "search the web for Rust async tutorials and save the best link",
            None,
        )
        .unwrap();
    let steps = plan.steps();
    let tools: Vec<&str> = steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["web_search", "memory_store"]);
    assert_eq!(steps[1].input_refs, [steps[0].id.clone()]);
}

#[test]
fn what_a_changing_verb_acts_on_is_no_second_action() {
    // "diff" names the compare intent; after "apply", with an article, it is the patch.
    assert_eq!(tools("apply this diff to src/lib.rs"), ["apply_patch"]);
    assert_eq!(tools("show me the diff"), ["git_diff"]);
}

#[test]
fn reading_again_what_the_clause_before_reads_is_one_step() {
    assert_eq!(
        tools("find CommandRouter and read it"),
        ["find_symbol", "read_file"]
    );
}

#[test]
fn a_file_the_verb_acts_on_is_what_a_review_reads() {
    // The review's evidence rule gathers a diff for "review my changes"; a file named
    // as the verb's object is the material itself (docs/architecture.md, "Plan").
    assert_eq!(
        tools("audit src/auth.rs for security problems"),
        ["code_review"]
    );
    assert_eq!(tools("review my changes"), ["git_diff", "code_review"]);
    assert_eq!(
        tools("review the changes in src/auth.rs"),
        ["git_diff", "code_review"]
    );
    assert_eq!(tools("explain src/main.rs"), ["read_file"]);
}

#[test]
fn a_clause_asking_to_hear_how_the_step_before_went_adds_no_step() {
    // The review is what "tell me what could be better" asks for; "let me know" and "tell
    // me if it passes" ask for the tests' outcome.
    assert_eq!(
        tools("look over my diff and tell me what could be better"),
        ["git_diff", "code_review"]
    );
    assert_eq!(tools("run the tests and let me know"), ["run_tests"]);
    // "show it to me" and "show me the result" ask to see the outcome; "show me what's
    // in the folder" asks a question of its own.
    assert_eq!(
        tools("fetch https://example.org/news and show it to me"),
        ["web_fetch"]
    );
    assert_eq!(
        tools("summarize notes.txt and show me the result"),
        ["pdf_summarize"]
    );
    // The reader fits "read it to me" but cannot take a fetched page: the clause asks to
    // hear the page.
    assert_eq!(
        tools("download the page at https://example.org/news and read it to me"),
        ["web_fetch"]
    );
    assert_eq!(
        tools("run the tests and tell me if it passes"),
        ["run_tests"]
    );
    // A question with a subject of its own is a request, here one nothing fits.
    assert_eq!(
        tools("run the tests and tell me what the weather is"),
        ["run_tests", "unknown"]
    );
    // With nothing planned before it, there is no step to hear back from.
    assert_eq!(
        tools("order a pizza and tell me what it costs"),
        ["unknown", "unknown"]
    );
}

#[test]
fn route_reports_a_gap_below_the_threshold() {
    let r = engine()
        .route("order me a large pepperoni pizza", None)
        .unwrap();
    assert!(r[0].recommendation.is_none());
    assert!(
        r[0].gap_warning
            .as_deref()
            .unwrap()
            .contains("no catalog entry")
    );
    let r = engine()
        .route("summarize https://example.com/a.pdf", None)
        .unwrap();
    let rec = r[0].recommendation.as_ref().unwrap();
    assert_eq!(rec.id, "pdf_summarize");
    assert_eq!(r[0].suggested_args["source"], "https://example.com/a.pdf");
}

#[test]
fn specialist_view_has_one_creator_the_workflow_and_every_url() {
    let request = "create an agent that checks my saved search https://jobs.example.com/search?q=rust every morning and emails me new results";
    let plan = engine().plan(request, None).unwrap();
    let view = engine().specialist_plan(request, &plan);
    assert_eq!(
        view.priority_order,
        [
            waypoint_protocol::Priority::One("agent".into()),
            waypoint_protocol::Priority::One("workflow".into())
        ]
    );
    assert_eq!(
        view.extracted_context["urls"],
        ["https://jobs.example.com/search?q=rust"]
    );
    assert!(view.instructions["agent"].contains("https://jobs.example.com/search?q=rust"));
    assert!(view.instructions["general"].contains("Do not ask for credentials"));
    assert!(!view.fallback);
}

#[test]
fn specialist_view_falls_back_to_general() {
    let plan = engine().plan("order me a pizza", None).unwrap();
    let view = engine().specialist_plan("order me a pizza", &plan);
    assert!(view.fallback);
    assert_eq!(
        view.priority_order,
        [waypoint_protocol::Priority::One("general".into())]
    );
}

#[test]
fn a_catalog_lexicon_extends_the_vocabulary() {
    let text = "tools:\n  - name: release\n    description: Release a build to production.\n    produces: [deployment]\nlexicon:\n  intents: {deploy: [\"ship\", \"roll out\"]}\n  entities: {production: [\"prod\", \"live site\"]}\nevidence:\n  - {intent: deploy, entity: production, needs: [deployment]}\n";
    let catalog = waypoint_catalog::load(&[waypoint_catalog::Source {
        name: "c.yaml".into(),
        text: text.into(),
    }])
    .unwrap()
    .catalog;
    let engine = waypoint_core::Engine::new(catalog, waypoint_core::Options::default()).unwrap();
    let plan = engine
        .plan("ship the new build to the live site", None)
        .unwrap();
    let goal = &plan.understanding().goals[0];
    assert_eq!(
        (goal.intent.as_str(), goal.entity.as_deref()),
        ("deploy", Some("production"))
    );
    assert_eq!(plan.steps()[0].tool, "release");
}

#[test]
fn an_object_no_entry_knows_leaves_a_verb_only_match_below_the_threshold() {
    // "open" fits read_file, but nothing in the catalog handles a PR.
    assert_eq!(tools("open a PR"), ["unknown"]);
    // A tool whose required argument is free text takes any object as its input.
    assert_eq!(tools("remember the Orion launch"), ["memory_store"]);
}

#[test]
fn a_verb_that_destroys_leaves_no_other_intent_to_a_tool_that_destroys_nothing() {
    // "build" is what is to be deleted, not a build to run or an agent to build; the
    // built-in catalog deletes no directories.
    assert_eq!(tools("delete the build directory"), ["unknown"]);
    assert_eq!(tools("delete all my notes"), ["memory_forget"]);
}

#[test]
fn a_new_thing_the_pick_runs_is_made_first() {
    // "every morning" routes to the workflow, which runs agents; "an agent" is to be
    // made, so the agent comes first and feeds the workflow.
    let plan = engine()
        .plan("create an agent that checks my inbox every morning", None)
        .unwrap();
    let steps = plan.steps();
    let names: Vec<&str> = steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(names, ["create_agent", "create_workflow"]);
    assert!(steps[1].input_refs.contains(&steps[0].id), "{:?}", steps[1]);
    // Nothing new to make: the workflow alone.
    assert_eq!(
        tools("create a workflow every morning"),
        ["create_workflow"]
    );
}

#[test]
fn a_question_asks_for_what_its_verb_would_keep() {
    // "remember" is memory_store's own word, but asked, it recalls: a question plans
    // no write.
    assert_eq!(
        tools("what do you remember about the deploy key"),
        ["memory_recall"]
    );
    // A request that only sounds like a question, and a statement, still store.
    assert_eq!(
        tools("can you remember that the deploy key is in vault"),
        ["memory_store"]
    );
    assert_eq!(
        tools("remember that the deploy key is in vault"),
        ["memory_store"]
    );
}

#[test]
fn an_acronym_after_an_article_is_what_the_verb_acts_on() {
    assert_eq!(tools("check the CI status"), ["ci_status"]);
}

#[test]
fn a_clause_that_points_back_takes_a_candidate_that_can_use_what_came_before() {
    // improve_agent scores a little higher on "fix", but "it" is the file just read.
    assert_eq!(
        tools("read src/main.rs and fix it"),
        ["read_file", "apply_patch"]
    );
    assert_eq!(tools("fix the agent"), ["improve_agent"]);
}

#[test]
fn a_closed_compound_in_a_tool_name_meets_the_open_verb() {
    let catalog = waypoint_catalog::load(&[waypoint_catalog::Source {
        name: "accounts.yaml".into(),
        text: "tools:
  - name: account_login
    description: Account Login Tool
  - name: account_logout
    description: Account Logout Tool
  - name: change_password
    description: Tool for changing account password
"
        .into(),
    }])
    .unwrap()
    .catalog;
    let e = waypoint_core::Engine::new(catalog, waypoint_core::Options::default()).unwrap();
    for (request, tool) in [
        ("log into my online banking account", "account_login"),
        ("please log in to my account with ID 1234", "account_login"),
        ("log out of my bank account", "account_logout"),
    ] {
        let plan = e.plan(request, None).unwrap();
        assert_eq!(plan.steps()[0].tool, tool, "{request}");
    }
}

#[test]
fn a_verb_the_catalog_knows_outweighs_the_objects_article() {
    // "my flight booking" exists already, which speaks for a tool that modifies; but
    // "cancel" names what to do to it.
    let catalog = waypoint_catalog::load(&[waypoint_catalog::Source {
        name: "flights.yaml".into(),
        text: "tools:
  - name: flight_ticket_cancelling
    description: Cancel a Flight Ticket to cancel a flight
  - name: flight_ticket_changing
    description: Flight Ticket Booking Modification or Rescheduling Tool
  - name: book_flight
    description: Flight booking tool
"
        .into(),
    }])
    .unwrap()
    .catalog;
    let e = waypoint_core::Engine::new(catalog, waypoint_core::Options::default()).unwrap();
    let plan = e
        .plan(
            "Please cancel my flight booking for CA8499 at 5 PM tomorrow",
            None,
        )
        .unwrap();
    assert_eq!(plan.steps()[0].tool, "flight_ticket_cancelling");
    // A verb that asks for a change still finds the tool that changes one.
    let plan = e
        .plan("change my flight booking to tomorrow", None)
        .unwrap();
    assert_eq!(plan.steps()[0].tool, "flight_ticket_changing");
}

#[test]
fn a_particle_after_the_verb_is_part_of_it() {
    // "off" was the verb's object, which no tool knows, so the build tool lost its
    // bonuses to the agent builder ("build an agent").
    assert_eq!(tools("kick off a build"), ["run_build"]);
    assert_eq!(tools("execute the unit tests"), ["run_tests"]);
}

#[test]
fn a_reference_point_names_no_entity() {
    // "since my last commit" says since when; what was touched is the working tree.
    assert_eq!(
        tools("what did I touch since my last commit"),
        ["git_status"]
    );
    // "how do … differ" compares; "last" and "two" name no component to explain.
    assert_eq!(tools("how do the last two commits differ"), ["git_diff"]);
}

#[test]
fn a_complement_of_the_verb_describes_its_object() {
    // "to also label urgent tickets" is what the agent should do, not a request of its
    // own; "the" before the agent's name is no change to make.
    let plan = engine()
        .plan("teach the triage agent to also label urgent tickets", None)
        .unwrap();
    let step = &plan.steps()[0];
    assert_eq!(step.tool, "improve_agent");
    assert_eq!(step.args["agent"], "triage");
    assert_eq!(step.args["change"], "also label urgent tickets");
}

#[test]
fn what_you_find_is_the_step_befores_output() {
    let plan = engine()
        .plan(
            "search the web for rust conferences and save what you find",
            None,
        )
        .unwrap();
    let steps = plan.steps();
    let names: Vec<&str> = steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(names, ["web_search", "memory_store"]);
    assert_eq!(steps[1].args["value"]["$ref"], "s1/output");
}

#[test]
fn a_participle_before_a_noun_says_nothing_of_what_an_entry_does() {
    // get_vault_credential "Fetch[es] a stored credential": it stores nothing.
    let e = crate::engine_over(
        "vault.yaml",
        "tools:
  - name: memory_store
    description: Persist a piece of text under a key so it can be recalled later.
    keywords: [remember, save, store]
    input_schema: {type: object, properties: {value: {type: string}}, required: [value]}
    effects: write
  - name: get_vault_credential
    description: Fetch a stored credential from the vault at run time.
    keywords: [credential, password]
    input_schema: {type: object, properties: {name: {type: string}}, required: [name]}
    effects: read
",
    );
    let report = &e.route("store the deploy notes", None).unwrap()[0];
    assert_eq!(
        report.recommendation.as_ref().map(|c| c.id.as_str()),
        Some("memory_store")
    );
    assert!(
        report
            .alternatives
            .iter()
            .all(|c| c.id != "get_vault_credential"),
        "{:?}",
        report.alternatives
    );
}

/// Three readers as the MCP filesystem server lists them (descriptions shortened).
const READERS: &str = r#"tools:
  - name: fs.read_file
    description: "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead."
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
  - name: fs.read_text_file
    description: "Read the complete contents of a file from the file system as text."
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
  - name: fs.read_media_file
    description: "Read a file and return it as base64. Image and audio files are returned as image/audio content."
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
"#;

#[test]
fn a_deprecated_entry_gives_way_to_its_replacement() {
    let e = crate::engine_over("fs.yaml", READERS);
    let first = |request: &str| e.plan(request, None).unwrap().steps()[0].tool.clone();
    // The two text readers share every word of the request; the one its own description
    // calls deprecated comes second.
    assert_eq!(
        first("print the contents of notes.txt"),
        "fs.read_text_file"
    );
    // The family of the file named is a word of the clause: a picture is media.
    assert_eq!(first("open photo.png"), "fs.read_media_file");
    assert_eq!(first("open notes.txt"), "fs.read_text_file");
}

#[test]
fn why_asks_for_a_diagnosis_wherever_it_stands() {
    // "why the pipeline is red" never says "why is"; the pipeline is CI's.
    assert_eq!(
        tools("can you check why the pipeline is red"),
        ["ci_status"]
    );
    // How a pipeline works is still a component to explain.
    assert_eq!(
        tools("how does the pipeline work"),
        ["find_symbol", "read_file"]
    );
}

const CHANGERS: &str = r#"tools:
  - name: change_password
    description: "Tool for changing an account password"
  - name: file_write
    description: "Write text to a new file at a path"
  - name: file_modify
    description: "Change the content of an existing file"
  - name: alarm_change
    description: "Change an alarm"
"#;

#[test]
fn the_rest_of_the_request_decides_a_tie() {
    let e = crate::engine_over("changers.yaml", CHANGERS);
    let tools = |request: &str| -> Vec<String> {
        let plan = e.plan(request, None).unwrap();
        plan.steps().iter().map(|s| s.tool.clone()).collect()
    };
    // "change it" fits every tool that changes something equally; the request is about
    // a file.
    let request = "write the launch note to a new file, then change it";
    assert_eq!(tools(request), ["file_write", "file_modify"]);
    let plan = e.plan(request, None).unwrap();
    assert!(
        plan.steps()[1]
            .rationale
            .contains("the request is about file"),
        "{}",
        plan.steps()[1].rationale
    );
    // Where the rest of the request names none of the tied tools, nothing is made up.
    let alone = e.route("change it", None).unwrap();
    let best = alone[0].recommendation.as_ref().unwrap();
    assert!((best.score - alone[0].alternatives[0].score).abs() < 1e-9);
    assert!(best.why.iter().all(|w| !w.contains("the request is about")));
}

#[test]
fn a_reason_or_a_description_after_a_request_asks_for_no_step() {
    assert_eq!(
        clauses("list my open pull requests, because the release is near").len(),
        2
    );
    assert_eq!(
        tools("list my open pull requests, because the release is near"),
        tools("list my open pull requests")
    );
    // The reason is still read for values; it asks for nothing itself.
    assert_eq!(
        tools("remember my locker code 4471, because I keep forgetting it"),
        ["memory_store"]
    );
    assert_eq!(
        tools("summarize report.pdf, which is the quarterly review"),
        ["pdf_summarize"]
    );
    // First in a request, or after "and then", "which is" asks.
    assert_ne!(tools("which is the newest commit"), ["unknown"]);
    assert_eq!(
        clauses("summarize report.pdf and then which is the newest commit").len(),
        2
    );
    assert_eq!(
        tools("summarize report.pdf and then which is the newest commit").len(),
        2
    );
}

const BY_ID: &str = r#"tools:
  - name: search_company
    description: "Search and find companies."
  - name: get_company_logo
    description: "Retrieve a company's logos based on its ID."
  - name: get_top_rated_company
    description: "Get the top rated companies."
  - name: get_person_detail
    description: "Get the primary information about a person."
    input_schema: {type: object, properties: {person_id: {type: integer}}, required: [person_id]}
  - name: search_people
    description: "Search for people by name."
"#;

#[test]
fn a_thing_the_request_names_is_found_before_a_tool_takes_it_by_id() {
    let e = crate::engine_over("by_id.yaml", BY_ID);
    let plan = |request: &str| e.plan(request, None).unwrap();
    let tools = |request: &str| -> Vec<String> {
        plan(request)
            .steps()
            .iter()
            .map(|s| s.tool.clone())
            .collect()
    };
    // The logo tool takes a company by its id; the request names Walt Disney.
    let p = plan("show me the logo of Walt Disney");
    let steps: Vec<&str> = p.steps().iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(steps, ["search_company", "get_company_logo"]);
    assert_eq!(p.steps()[1].input_refs, [p.steps()[0].id.clone()]);
    assert!(
        p.steps()[0].rationale.contains("by its id"),
        "{}",
        p.steps()[0].rationale
    );
    // A required `person_id` says the same; "people" names the kind "person".
    assert_eq!(
        tools("get the details of Ada Lovelace"),
        ["search_people", "get_person_detail"]
    );
    // An earlier step gives a company already, and an id said is the one to use.
    assert_eq!(
        tools("find the top rated company, then show me its logo"),
        ["get_top_rated_company", "get_company_logo"]
    );
    assert_eq!(
        tools("show me the logo for company ID 42"),
        ["get_company_logo"]
    );
}

#[test]
fn a_new_thing_is_for_the_entry_whose_description_makes_new_ones() {
    // As the MCP memory server describes its tools: one makes new entities, one adds to
    // existing ones. "an entity" asks for a new one, whatever the verb.
    let e = crate::engine_over(
        "memory.yaml",
        r"
tools:
  - name: create_entities
    description: Create multiple new entities in the knowledge graph
    effects: write
  - name: add_observations
    description: Add new observations to existing entities in the knowledge graph
    effects: write
",
    );
    assert_eq!(
        crate::tools_of(&e, "add an entity for Alice who is a person"),
        ["create_entities"]
    );
    // Observations are new to both, and only one adds them.
    assert_eq!(
        crate::tools_of(&e, "add an observation that Alice likes tea"),
        ["add_observations"]
    );
}

#[test]
fn where_no_entry_declares_what_it_makes_its_name_says_it() {
    // "as a relation" names what the clause asks to be made; no entry declares products,
    // so `create_relations`' name speaks for it, as `produces: [relation]` would.
    let e = crate::engine_over(
        "memory.yaml",
        r"
tools:
  - name: create_relations
    description: Create multiple new relations between entities in the knowledge graph
  - name: read_graph
    description: Read the entire knowledge graph
",
    );
    let asked = crate::score_of(&e, "record Alice at Acme as a relation", "create_relations");
    let named = crate::score_of(&e, "record Alice at Acme, relation", "create_relations");
    assert!(
        asked > named,
        "as a relation {asked}, a relation named {named}"
    );
}
