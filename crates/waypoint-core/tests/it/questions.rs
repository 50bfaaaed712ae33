//! Questions that ask without the words a catalog describes the answer with: what a
//! folder holds, how big a file is, whether a file exists. Tools as the MCP filesystem
//! server describes them (docs/routing.md, item 1).

use std::sync::OnceLock;

use waypoint_core::Engine;

use crate::engine_over;

fn files() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        engine_over(
            "fs.yaml",
            r"
tools:
  - name: read_text_file
    description: Read the complete contents of a file from the file system as text.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
  - name: write_file
    description: Create a new file or completely overwrite an existing file with new content.
    input_schema: {type: object, properties: {path: {type: string}, content: {type: string}}, required: [path, content]}
    effects: destructive
  - name: create_directory
    description: Create a new directory or ensure a directory exists.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
    effects: write
  - name: list_directory
    description: Get a detailed listing of all files and directories in a specified path.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
  - name: list_directory_with_sizes
    description: Get a detailed listing of all files and directories in a specified path, including sizes.
    input_schema: {type: object, properties: {path: {type: string}, sortBy: {type: string, enum: [name, size]}}, required: [path]}
  - name: get_file_info
    description: Retrieve detailed metadata about a file or directory, including size, creation time, last modified time and permissions.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
  - name: search_files
    description: Recursively search for files and directories matching a pattern.
    input_schema: {type: object, properties: {path: {type: string}, pattern: {type: string}}, required: [path, pattern]}
",
        )
    })
}

/// The entry recommended for the request's first clause, if one clears the threshold.
fn top(request: &str) -> Option<String> {
    let routes = files().route(request, None).unwrap();
    routes[0].recommendation.as_ref().map(|c| c.id.clone())
}

#[test]
fn a_question_for_what_a_folder_holds_asks_to_list_it() {
    for q in [
        "what's inside the src folder",
        "what files are in the docs directory",
    ] {
        assert_eq!(top(q).as_deref(), Some("list_directory"), "{q}");
    }
    // Of a file, the same question asks to read it.
    assert_eq!(
        top("what's in notes.txt").as_deref(),
        Some("read_text_file")
    );
}

#[test]
fn how_and_an_adjective_ask_for_a_measure_of_what_the_clause_names() {
    // A file has its size in its metadata; the tool named for directories lists a
    // folder's, so it serves a folder.
    assert_eq!(
        top("how big is report.pdf").as_deref(),
        Some("get_file_info")
    );
    assert_eq!(
        top("how big is the src folder").as_deref(),
        Some("list_directory_with_sizes")
    );
}

#[test]
fn a_yes_no_question_asks_to_be_told_not_to_write() {
    let asked = top("is there a file called config.yaml anywhere");
    assert_eq!(asked.as_deref(), Some("search_files"));
    // A request in a question's form still asks for a change.
    assert_eq!(
        top("can you write hello to notes.txt").as_deref(),
        Some("write_file")
    );
}
