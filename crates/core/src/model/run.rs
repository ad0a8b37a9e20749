//! What a run carries between steps: the run input, object pointers, the review task token.
