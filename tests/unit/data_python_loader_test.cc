// data/python_loader: Polygraphy's data-loader scripts run in a child python3 with numpy; the
// feed dicts in order (a generator and a list, the function after ':'), and each failure as a
// pg::Error naming the script: a Python exception (its message), a missing function, a feed
// that is not a dict, no feeds, a missing script. Skipped where no python3 has numpy.
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "data/python_loader.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::string write_script(const std::string& dir, const std::string& text) {
    const std::string path = dir + "/loader.py";
    std::ofstream(path) << text;
    return path;
}

const char* kScript = R"PY(import numpy as np
def load_data():
    for i in range(3):
        yield {"x": np.full((2, 2), i, dtype=np.float32), "n": np.array([i], dtype=np.int64)}
def as_list():
    return [{"file": np.arange(3, dtype=np.float64)}]
def fails():
    raise ValueError("no such dataset")
def not_dicts():
    return [[1, 2]]
def nothing():
    return []
def chatty():
    import sys
    sys.stderr.write("x" * (4 << 20))
    raise ValueError("after the noise")
)PY";

// The error of loading `func`, or a test failure when none.
Error error_of(const std::string& script, const std::string& func) {
    try {
        data::load_python_inputs({script, func});
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << func << " loaded";
    return Error(ErrorKind::kInternal, "");
}

TEST(DataPythonLoader, ScriptsAndFunctionsAreParsedAsPolygraphyDoes) {
    EXPECT_TRUE(data::is_python_loader("data_loader.py"));
    EXPECT_TRUE(data::is_python_loader("dir/d.py:make"));
    EXPECT_FALSE(data::is_python_loader("inputs.json"));
    EXPECT_FALSE(data::is_python_loader("a.npz"));
    const auto s = data::parse_python_loader("dir/d.py:make");
    EXPECT_EQ(s.script, "dir/d.py");
    EXPECT_EQ(s.function, "make");
    EXPECT_EQ(data::parse_python_loader("d.py").function, "load_data");
    EXPECT_THROW(data::parse_python_loader("d.py:"), Error);
}

TEST(DataPythonLoader, FeedDictsComeInOrderAndFailuresNameTheScript) {
    const std::string dir = test::make_temp_dir();
    const std::string script = write_script(dir, kScript);
    data::FeedList feeds;
    try {
        feeds = data::load_python_inputs({script, "load_data"});
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::kUnsupported) GTEST_SKIP() << e.message();
        throw;
    }
    ASSERT_EQ(feeds.size(), 3u);
    EXPECT_EQ(feeds[2][0].first, "x");
    EXPECT_EQ(feeds[2][0].second.dims(), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(feeds[2][0].second.data<float>()[3], 2.0f);
    EXPECT_EQ(feeds[1][1].second.dtype(), DataType::kInt64);
    const auto list = data::load_python_inputs({script, "as_list"});
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0][0].first, "file");  // numpy.savez's own parameter name
    EXPECT_EQ(list[0][0].second.dtype(), DataType::kFloat64);
    const Error raised = error_of(script, "fails");
    EXPECT_EQ(raised.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(raised.message().find("no such dataset"), std::string::npos) << raised.message();
    EXPECT_NE(error_of(script, "missing").message().find("no function 'missing'"),
              std::string::npos);
    EXPECT_NE(error_of(script, "not_dicts").message().find("not a dict"), std::string::npos);
    EXPECT_NE(error_of(script, "nothing").message().find("gave no feed dicts"), std::string::npos);
    const std::string chatty = error_of(script, "chatty").message();  // 4 MiB on stderr
    EXPECT_NE(chatty.find("after the noise"), std::string::npos);
    EXPECT_LT(chatty.size(), 10000u);
    EXPECT_EQ(error_of(dir + "/absent.py", "load_data").kind(), ErrorKind::kIo);
}

}  // namespace
}  // namespace pg
