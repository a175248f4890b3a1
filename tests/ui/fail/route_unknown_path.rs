// A path the spec lacks: the error names the closest route and its operation.
fn main() {
    let _ = payspec_macros::route!(POST /v2/transfers/banks);
}
