pub mod counting;
pub mod mock;
