// The transfer from issue 10: account number and bank code given positionally, swapped.
// A request whose required fields could be swapped has no positional constructor, so
// this does not compile; its fields are named through `builder()`.

use payspec_client::requests::BankTransfer;

fn main() {
    let amount = "2500.00".parse().expect("an amount");
    let _ = BankTransfer::new(amount, "058", "0123456789", "tx-1", "Ada Obi");
}
