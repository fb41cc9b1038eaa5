// Hostile external-data references given to `polygraph inspect model`: locations that climb out
// of the model's folder (.., absolute, symlinks), offsets and lengths that lie, bad numbers and
// missing or odd files. Each must end with exit 3 and a message naming the tensor, the location
// and the problem, and an inotify watch proves nothing outside the model's folder was opened.
#include <sys/stat.h>

#include <filesystem>

#include "cli/hostile_support.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using test::expect_rejected;

// root/model/m.onnx with w in root/model/w.bin; root/x and root/outside/secret.bin hold 16
// bytes each, exactly what w needs, so reading them would succeed.
struct Layout {
    std::string root, model_dir, outside_dir, model;
    onnxpb::ModelProto saved;  // the model as saved, before any corruption
};

Layout make_layout() {
    Layout l;
    l.root = test::make_temp_dir();
    l.model_dir = l.root + "/model";
    l.outside_dir = l.root + "/outside";
    fs::create_directories(l.model_dir);
    fs::create_directories(l.outside_dir);
    test::write_raw(l.root + "/x", std::string(16, '\x11'));
    test::write_raw(l.outside_dir + "/secret.bin", std::string(16, '\x22'));
    l.model = l.model_dir + "/m.onnx";
    onnx::SaveOptions opts;
    opts.external_data_path = "w.bin";
    opts.external_data_size_threshold = 0;
    onnx::save_model(*test::hostile_base_model(), l.model, opts);
    l.saved = test::read_proto(l.model);
    return l;
}

// Sets (or adds) key=value in the external_data entries of initializer w.
void set_entry(onnxpb::ModelProto& mp, const std::string& key, const std::string& value) {
    auto* tp = mp.mutable_graph()->mutable_initializer(0);
    for (auto& kv : *tp->mutable_external_data())
        if (kv.key() == key) return kv.set_value(value);
    auto* kv = tp->add_external_data();
    kv->set_key(key);
    kv->set_value(value);
}

onnxpb::ModelProto with_entry(const Layout& l, const std::string& key, const std::string& value) {
    auto mp = l.saved;
    set_entry(mp, key, value);
    return mp;
}

// Writes the model, runs inspect and checks the rejection and that nothing outside was opened.
void expect_contained(const Layout& l, const onnxpb::ModelProto& mp,
                      const std::vector<std::string>& words, long limit_kib = 0) {
    test::write_proto(mp, l.model);
    test::OpenWatch root(l.root), outside(l.outside_dir);
    std::vector<std::string> all = {"m.onnx", "tensor 'w'"};
    all.insert(all.end(), words.begin(), words.end());
    expect_rejected(l.model, 3, all, limit_kib);
    EXPECT_EQ(root.touched(), std::vector<std::string>{});
    EXPECT_EQ(outside.touched(), std::vector<std::string>{});
}

TEST(HostileExternal, ValidModelReadsItsDataFile) {  // the watch sees what a run opens
    Layout l = make_layout();
    test::OpenWatch watch(l.model_dir);
    auto r = test::run_polygraph({"inspect", "model", l.model});
    ASSERT_EQ(r.status, 0) << r.all();
    auto touched = watch.touched();
    EXPECT_NE(std::find(touched.begin(), touched.end(), "w.bin"), touched.end());
}

TEST(HostileExternal, DotDotLocation) {
    Layout l = make_layout();
    expect_contained(l, with_entry(l, "location", "../x"), {"'../x'", "leaves the model's folder"});
    expect_contained(l, with_entry(l, "location", "sub/../../x"), {"leaves the model's folder"});
}

TEST(HostileExternal, AbsoluteLocation) {
    Layout l = make_layout();
    const std::string abs = l.outside_dir + "/secret.bin";
    expect_contained(l, with_entry(l, "location", abs), {abs, "absolute path"});
}

TEST(HostileExternal, SymlinkPointingOutside) {
    Layout l = make_layout();
    fs::create_symlink(l.outside_dir + "/secret.bin", l.model_dir + "/link.bin");
    expect_contained(l, with_entry(l, "location", "link.bin"),
                     {"'link.bin'", "outside the model's folder"});
}

TEST(HostileExternal, RelativeSymlinkedFolderPointingOutside) {
    Layout l = make_layout();
    fs::create_directory_symlink("../outside", l.model_dir + "/sub");
    expect_contained(l, with_entry(l, "location", "sub/secret.bin"),
                     {"outside the model's folder"});
}

TEST(HostileExternal, SymlinkStayingInsideIsFine) {
    Layout l = make_layout();
    fs::create_symlink("w.bin", l.model_dir + "/alias.bin");
    test::write_proto(with_entry(l, "location", "alias.bin"), l.model);
    auto r = test::run_polygraph({"inspect", "model", l.model});
    EXPECT_EQ(r.status, 0) << r.all();
}

TEST(HostileExternal, OffsetPastTheEnd) {
    Layout l = make_layout();
    expect_contained(l, with_entry(l, "offset", "4096"),
                     {"offset 4096", "runs past the end", "'w.bin'"});
}

TEST(HostileExternal, LengthPastTheEnd) {
    Layout l = make_layout();
    expect_contained(l, with_entry(l, "length", "4096"), {"length 4096", "runs past the end"});
}

TEST(HostileExternal, OffsetPlusLengthOverflows) {
    Layout l = make_layout();
    auto mp = with_entry(l, "offset", "8");
    set_entry(mp, "length", "18446744073709551615");
    expect_contained(l, mp, {"runs past the end"});
}

TEST(HostileExternal, LengthDisagreesWithShape) {
    Layout l = make_layout();
    expect_contained(l, with_entry(l, "length", "8"), {"has 8 bytes", "need 16"});
}

TEST(HostileExternal, NonNumericOffsetAndLength) {
    Layout l = make_layout();
    for (const char* bad : {"abc", "-1", "12abc", "", " 4", "99999999999999999999999"}) {
        SCOPED_TRACE(std::string("offset '") + bad + "'");
        expect_contained(l, with_entry(l, "offset", bad), {"offset is not a non-negative integer"});
    }
    expect_contained(l, with_entry(l, "length", "0x10"), {"length is not a non-negative integer"});
}

TEST(HostileExternal, MissingFile) {
    Layout l = make_layout();
    expect_contained(l, with_entry(l, "location", "nothere.bin"), {"nothere.bin", "No such file"});
}

TEST(HostileExternal, LocationIsAFolder) {
    Layout l = make_layout();
    fs::create_directory(l.model_dir + "/dir.bin");
    expect_contained(l, with_entry(l, "location", "dir.bin"), {"dir.bin", "directory"});
}

TEST(HostileExternal, LocationIsAFifoDoesNotHang) {
    Layout l = make_layout();
    ASSERT_EQ(::mkfifo((l.model_dir + "/pipe.bin").c_str(), 0600), 0);
    expect_contained(l, with_entry(l, "location", "pipe.bin"), {"pipe.bin", "not a regular file"});
}

TEST(HostileExternal, NoLocation) {
    Layout l = make_layout();
    auto mp = l.saved;
    mp.mutable_graph()->mutable_initializer(0)->clear_external_data();
    expect_contained(l, mp, {"has no location"});
}

TEST(HostileExternal, NulByteInLocation) {
    Layout l = make_layout();
    expect_contained(l, with_entry(l, "location", std::string("w.bin\0../../x", 13)), {"NUL"});
}

TEST(HostileExternal, HugeDimsWithSmallFile) {
    Layout l = make_layout();
    auto mp = l.saved;
    auto* tp = mp.mutable_graph()->mutable_initializer(0);
    tp->clear_dims();
    tp->add_dims(int64_t{1} << 20);
    tp->add_dims(int64_t{1} << 20);
    expect_contained(l, mp, {"has 16 bytes", "need 4398046511104"}, test::kLimitKib);
}

TEST(HostileExternal, StringTensorAsExternalData) {
    Layout l = make_layout();
    auto mp = l.saved;
    mp.mutable_graph()->mutable_initializer(0)->set_data_type(8);
    expect_contained(l, mp, {"STRING tensors must use string_data"});
}

}  // namespace
}  // namespace pg
