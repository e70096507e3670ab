//! Placeholder: replaced by the heat-equation example once the containers land.
fn main() {}
