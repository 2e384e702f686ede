//! The spec docs/datasets.md opens with ("The file"), every field of a
//! dataset shown, is a valid spec as written.

use deltaload_core::Spec;

#[test]
fn the_documented_spec_file_is_valid() {
    let docs = include_str!("../../../docs/datasets.md");
    let from = docs.find("## The file").expect("the section");
    let block = &docs[from..];
    let start = block.find("```toml\n").expect("its spec") + "```toml\n".len();
    let text = &block[start..start + block[start..].find("```").expect("its end")];
    let spec = Spec::parse(text, "datasets.md").unwrap_or_else(|e| panic!("{e}"));
    let d = &spec.datasets[0];
    assert_eq!(d.name, "subscribers");
    assert!(d.delete_when.is_some() && !d.partition_by.is_empty());
    assert_eq!(d.expectations.len(), 1, "the expectation is shown too");
}
