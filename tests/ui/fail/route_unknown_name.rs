// A misspelt operation name: the error names the closest operation.
fn main() {
    let _ = payspec_macros::route!(bank_tranfer);
}
