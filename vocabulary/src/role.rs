//! The stateful behaviours the sandbox has beyond what a spec says of every operation
//! ([`ROLES`]): an operation plays one when its spec says so (`role: <name>`), never by its
//! name. Without a role, the sandbox answers an operation by what the spec says of it (a
//! money operation and its lookups, a listing, the balance, the token operations), else
//! with a sample of its answer.

/// One behaviour an operation may play: its name as a spec writes it, and what the sandbox
/// does for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Role {
    /// The spec's word (`sub_account_open`).
    pub name: &'static str,
    /// What the sandbox does for an operation that plays it.
    pub doc: &'static str,
}

/// Every role, in the order the sandbox's rooms hold them.
pub const ROLES: &[Role] = &[
    Role {
        name: "account_balance",
        doc: "answers an account's balance, the parent's or the one its account id names",
    },
    Role { name: "sub_account_open", doc: "opens a sub-account under the parent, its reference unique" },
    Role { name: "sub_account_list", doc: "lists the sub-accounts opened" },
    Role { name: "sub_account_read", doc: "reads one sub-account by its id" },
    Role { name: "virtual_account_open", doc: "opens a virtual account that a payment in credits" },
    Role { name: "virtual_account_read", doc: "reads one virtual account" },
    Role { name: "virtual_account_expire", doc: "expires a virtual account" },
    Role { name: "bill_purchase", doc: "buys airtime or data from the balance, once per reference" },
    Role {
        name: "bill_payment",
        doc: "pays a bill (a subscription, electricity, a betting account) from the balance",
    },
    Role { name: "checkout_order", doc: "opens a checkout order a card then pays" },
    Role { name: "card_token_charge", doc: "charges a tokenized card for a new order" },
    Role { name: "card_details", doc: "takes a card's details for an order, asking for an OTP or declining" },
    Role { name: "card_otp", doc: "takes the OTP that completes a card payment" },
    Role { name: "checkout_read", doc: "reads a checkout order's transaction" },
    Role { name: "collection_start", doc: "starts a mobile money collection" },
    Role { name: "collection_read", doc: "reads a collection" },
    Role { name: "payout_authorize", doc: "authorizes a cross-border payout" },
    Role { name: "payout_read", doc: "reads a cross-border payout" },
    Role { name: "delivery_log", doc: "lists the webhook deliveries sent" },
    Role { name: "delivery_resend", doc: "sends a webhook delivery again" },
    Role { name: "mandate_create", doc: "creates a direct-debit mandate" },
    Role { name: "mandate_list", doc: "lists the mandates" },
    Role { name: "mandate_read", doc: "reads one mandate" },
    Role {
        name: "bank_payout",
        doc: "sends money to a bank account from the balance, pending until it settles",
    },
    Role { name: "account_to_account", doc: "moves money between accounts of the service at once" },
    Role { name: "transaction_read", doc: "reads a transaction by its keys" },
    Role { name: "transaction_list", doc: "lists an account's transactions, by status and kind" },
];

/// The role of this name, if there is one.
pub fn role(name: &str) -> Option<&'static Role> {
    ROLES.iter().find(|role| role.name == name)
}
