// Seed data files for the load_data fuzzer, written with our own writers: .npy arrays of several
// dtypes and ranks (a scalar, an empty one), a .npz feed dict, a Polygraphy inputs JSON file of
// two iterations, a RunResults JSON file and TensorProto .pb files.
#pragma once

#include <string>

// Writes them into `dir` (which must exist). Throws pg::Error.
void write_data_seeds(const std::string& dir);
