//! Local AWS (issue: "Local AWS without Docker"): what our LocalStack extension must emulate.
//!
//! These tests talk to a running LocalStack; `make test` starts it (scripts/localstack.sh up) and
//! stops it afterwards. Point them elsewhere with `AWS_ENDPOINT_URL`.

mod admission;
mod cfn;
mod chaos;
mod config;
mod distributed_map;
mod dynamodb;
mod faults;
mod lambda;
mod ledger;
mod redrive;
mod requests;
mod review;
mod s3;
mod saga;
mod textract;
mod textract_quota;
mod textract_scale;
