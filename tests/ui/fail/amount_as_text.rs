// An amount written as text, as a newcomer first writes it: refused at compile time with a
// message that says how to make an `Amount`, not a bare type mismatch inside generated code.

use payspec_client::requests::BankTransfer;

fn main() {
    let _ = BankTransfer::builder().amount("2500.00");
}
