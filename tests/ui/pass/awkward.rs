// `generate!` on a spec of every awkward name the loader accepts (keywords as operations,
// groups, parameters and fields; enum values that are empty, digits, `Other`, `Self`; a
// shape that holds itself through a list): the generated code compiles and is callable.

use payspec_client::{Credentials, Operation};

payspec_macros::generate!("awkward.yaml");

fn main() {
    let request = requests::Loop::new("t-1", "10.00".parse().expect("an amount"))
        .r#ref(types::Ref::Ninemobile)
        .r#await("a-1")
        .r#dyn("d")
        .r#static(true);
    assert_eq!(<requests::Loop as Operation>::ROUTE.path, "/v1/loop/{type}");
    let client: Client = Client::builder()
        .environment(Environment::Custom("http://127.0.0.1:9".into()))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .build()
        .expect("a client");
    let group = client.r#match();
    drop(group.r#loop(request));
    let listed = client.r#gen().r#try(requests::Try::new());
    drop(listed);
    let answer: Option<types::Loop> = None;
    drop(answer.map(|a| (a.r#type, a.r#ref, a.r#async, a.r#where, a.other, a.other_fields)));
}
