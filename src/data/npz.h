// NumPy .npz archives: a zip of .npy members, one per array ("x.npy" holds key "x"). Reading
// accepts stored and deflated members (zlib), ZIP64 sizes and offsets, and checks every size and
// offset against the archive before use (a lying directory is kInvalidInput, never a huge
// allocation). Writing uses stored members, as numpy.savez does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "runners/runner.h"

namespace pg::data {

// True when the bytes start like a zip archive: a member ("PK\x03\x04"), or the end record of
// an archive with none ("PK\x05\x06", as numpy.savez writes no arrays).
bool is_npz(const uint8_t* data, uint64_t size);

// Every array of an archive, in directory order; keys lose their ".npy" suffix.
runners::NamedTensors npz_decode(std::string_view bytes, const std::string& what);
// The first array of an archive (Polygraphy's legacy ndarray fallback).
Tensor first_npz_array(std::string_view bytes, const std::string& what);

// Reads a .npz file. Throws kIo / kInvalidInput / kUnsupported.
runners::NamedTensors load_npz(const std::string& path);
// Writes a .npz file (stored members, like numpy.savez), atomically.
void save_npz(const std::string& path, const runners::NamedTensors& arrays);

}  // namespace pg::data
