//! Evaluation: datasets (SQuAD and its conversion to records), scoring,
//! and answering records in every mode.

pub mod calibrate;
pub mod dataset;
pub mod rank;
pub mod run;
pub mod score;
pub mod squad;
pub mod stats;
