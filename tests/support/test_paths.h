// Where tests find data and the built binary. Data folders may be absent: tests that need them
// call GTEST_SKIP() with a reason.
#pragma once

#include <string>
#include <vector>

namespace pg::test {

// ../shared beside the project (or $PG_SHARED_DIR); "" when absent.
std::string shared_dir();
// shared_dir() + "/" + `relative` when that file exists; "" otherwise (no shared folder).
std::string shared_file(const std::string& relative);
// Debian's libonnx-testdata data folder; "" when absent.
std::string onnx_testdata_dir();
// "" when ONNX Runtime's library loads; else the reason a test skips ("ONNX Runtime not available
// (run `make setup`): ...").
std::string onnxrt_missing();
// The polygraph binary under test.
std::string polygraph_binary();
// A fresh, empty temporary folder for this test (removed at process exit).
std::string make_temp_dir();
// Every file under `root` whose name ends with `suffix`, sorted.
std::vector<std::string> find_files(const std::string& root, const std::string& suffix);

}  // namespace pg::test
