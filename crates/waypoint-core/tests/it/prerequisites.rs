//! Steps that taught plans take first: labelled requests whose tools are a sequence teach
//! which tools run before which, and a plan gets the step a request takes for granted.

use waypoint_catalog::{Catalog, Source, load};
use waypoint_core::{Engine, Options};

const BANK: &str = r"
tools:
  - name: account_login
    description: log into the online bank account with an account id and password
  - name: balance_query
    description: query the balance of a bank card
  - name: exchange_rates
    description: look up foreign exchange rates
";

fn bank() -> Catalog {
    load(&[Source {
        name: "bank.yaml".into(),
        text: BANK.into(),
    }])
    .unwrap()
    .catalog
}

/// Twelve requests for a balance: `login_first` of them log in before it.
fn taught(login_first: usize, ordered: bool) -> Engine {
    let mut catalog = bank();
    for k in 0..12 {
        let request = format!("check the balance of my bank card {k}");
        let tools: &[&str] = if k < login_first {
            &["account_login", "balance_query"]
        } else {
            &["balance_query"]
        };
        let unknown = if ordered {
            catalog.teach_sequence(&request, tools)
        } else {
            catalog.teach(&request, tools)
        };
        assert!(unknown.is_empty());
    }
    Engine::new(catalog, Options::default()).unwrap()
}

fn steps(engine: &Engine, request: &str) -> Vec<(String, String, Vec<String>)> {
    engine
        .plan(request, None)
        .unwrap()
        .steps()
        .iter()
        .map(|s| (s.id.clone(), s.tool.clone(), s.after.clone()))
        .collect()
}

#[test]
fn a_step_taught_plans_take_first_is_added_before_it() {
    let e = taught(9, true);
    let plan = steps(&e, "check the balance of my bank card 6225880112345678");
    let tools: Vec<&str> = plan.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(tools, ["account_login", "balance_query"]);
    // The balance query waits for the login.
    assert_eq!(plan[1].2, [plan[0].0.clone()]);
    let planned = e
        .plan("check the balance of my bank card 6225880112345678", None)
        .unwrap();
    let why = &planned.steps()[0].rationale;
    assert!(why.contains("9 of 12"), "{why}");
}

#[test]
fn a_step_the_request_asks_for_is_not_added_twice() {
    let e = taught(9, true);
    let plan = steps(
        &e,
        "log into my online bank account, then check the balance of my bank card",
    );
    let tools: Vec<&str> = plan.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(tools, ["account_login", "balance_query"]);
}

#[test]
fn a_step_only_some_taught_plans_take_first_is_left_out() {
    // Six of twelve is not more often right than not.
    let e = taught(6, true);
    let tools: Vec<String> = steps(&e, "check the balance of my bank card 42")
        .into_iter()
        .map(|(_, t, _)| t)
        .collect();
    assert_eq!(tools, ["balance_query"]);
}

#[test]
fn labels_given_as_a_set_teach_no_order() {
    let e = taught(12, false);
    let tools: Vec<String> = steps(&e, "check the balance of my bank card 42")
        .into_iter()
        .map(|(_, t, _)| t)
        .collect();
    assert_eq!(tools, ["balance_query"]);
}

/// Sixty requests for exchange rates and a balance, `repeating` of them labelled with
/// the rates twice.
fn taught_rates(repeating: usize) -> Engine {
    let mut catalog = bank();
    for k in 0..60 {
        let request =
            format!("look up the exchange rates of currency {k} and query the balance of card {k}");
        let tools: &[&str] = if k < repeating {
            &["exchange_rates", "balance_query", "exchange_rates"]
        } else {
            &["exchange_rates", "balance_query"]
        };
        catalog.teach_sequence(&request, tools);
    }
    Engine::new(catalog, Options::default()).unwrap()
}

const SAID_TWICE: &str =
    "look up the exchange rates of the euro, then look up the exchange rates of the yen";

#[test]
fn where_taught_plans_use_each_tool_once_a_step_asked_again_is_one_step() {
    let e = taught_rates(0);
    let plan = e.plan(SAID_TWICE, None).unwrap();
    let tools: Vec<&str> = plan.steps().iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["exchange_rates"]);
    assert!(
        plan.steps()[0]
            .rationale
            .contains("asked again in clause 2"),
        "{}",
        plan.steps()[0].rationale
    );
}

#[test]
fn where_taught_plans_repeat_tools_each_ask_is_a_step() {
    // Untaught, and taught by plans of which 5 in 60 use the tool twice.
    for e in [engine_untaught(), taught_rates(5)] {
        // (`taught_rates` plans take no step first: nothing runs before the rates.)
        let plan = e.plan(SAID_TWICE, None).unwrap();
        let tools: Vec<&str> = plan.steps().iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, ["exchange_rates", "exchange_rates"]);
    }
}

fn engine_untaught() -> Engine {
    Engine::new(bank(), Options::default()).unwrap()
}

const TICKETS: &str = r"
tools:
  - name: gatepass
    description: Discover concerts, games and shows near you and buy tickets in seconds.
  - name: read_file
    description: Read a text file from disk.
    input_schema:
      type: object
      properties:
        path: {type: string, description: the file to read}
      required: [path]
";

#[test]
fn a_need_said_twice_to_a_tool_that_takes_no_arguments_is_one_step() {
    let catalog = load(&[Source {
        name: "tickets.yaml".into(),
        text: TICKETS.into(),
    }])
    .unwrap()
    .catalog;
    let e = Engine::new(catalog, Options::default()).unwrap();
    let plan = e
        .plan(
            "find concerts near Denver next month, and buy two tickets",
            None,
        )
        .unwrap();
    let tools: Vec<&str> = plan.steps().iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["gatepass"]);
    let why = &plan.steps()[0].rationale;
    assert!(why.contains("asked again in clause 2"), "{why}");
    // The same verb twice asks for two calls.
    let plan = steps(
        &e,
        "buy tickets for the Denver show, then buy tickets for the Boston show",
    );
    let tools: Vec<&str> = plan.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(tools, ["gatepass", "gatepass"]);
    // A tool that takes arguments keeps a step per value.
    let plan = steps(&e, "read README.md and read Cargo.toml");
    let tools: Vec<&str> = plan.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(tools, ["read_file", "read_file"]);
}
