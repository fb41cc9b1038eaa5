// base/fs: AtomicFile (every file Polygraph writes), resolve_inside (external-data paths) and
// MappedFile errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "base/error.h"
#include "base/fs.h"
#include "support/test_paths.h"

namespace pg {
namespace {

namespace fsys = std::filesystem;

std::vector<std::string> listing(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : fsys::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// The kind and message of the pg::Error that fn throws (fails the test if it throws none).
std::pair<ErrorKind, std::string> error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return {e.kind(), e.what()};
    }
    ADD_FAILURE() << "no pg::Error thrown";
    return {ErrorKind::kInternal, ""};
}

TEST(AtomicFile, CommitRenamesIntoPlace) {
    const std::string dir = test::make_temp_dir();
    AtomicFile f(dir + "/out.bin");
    f.write("hello");
    EXPECT_EQ(f.size(), 5u);
    ASSERT_EQ(listing(dir).size(), 1u);
    EXPECT_NE(listing(dir)[0], "out.bin");  // only a temporary exists before commit
    f.commit();
    EXPECT_EQ(listing(dir), std::vector<std::string>{"out.bin"});
    EXPECT_EQ(read_file(dir + "/out.bin"), "hello");
}

TEST(AtomicFile, DestructionWithoutCommitLeavesNothing) {
    const std::string dir = test::make_temp_dir();
    {
        AtomicFile f(dir + "/out.bin");
        f.write("partial");
    }
    EXPECT_EQ(listing(dir), std::vector<std::string>{});
}

TEST(AtomicFile, UncommittedWriteKeepsTheOldFile) {
    const std::string dir = test::make_temp_dir();
    write_file_atomic(dir + "/out.bin", "old");
    {
        AtomicFile f(dir + "/out.bin");
        f.write("new and half-written");
    }
    EXPECT_EQ(read_file(dir + "/out.bin"), "old");
    EXPECT_EQ(listing(dir), std::vector<std::string>{"out.bin"});
    write_file_atomic(dir + "/out.bin", "new");
    EXPECT_EQ(read_file(dir + "/out.bin"), "new");
}

TEST(AtomicFile, CreatesParentFolders) {
    const std::string dir = test::make_temp_dir();
    write_file_atomic(dir + "/a/b/out.bin", "x");
    EXPECT_EQ(read_file(dir + "/a/b/out.bin"), "x");
}

TEST(AtomicFile, RefusesADirectory) {
    const std::string dir = test::make_temp_dir();
    auto [kind, msg] = error_of([&] { AtomicFile f(dir); });
    EXPECT_EQ(kind, ErrorKind::kIo);
    EXPECT_NE(msg.find("directory"), std::string::npos) << msg;
}

TEST(ResolveInside, PlainRelativePathsStayInside) {
    const std::string dir = test::make_temp_dir();
    EXPECT_EQ(resolve_inside(dir, "w.bin", "t"), dir + "/w.bin");
    EXPECT_EQ(resolve_inside(dir, "a/../w.bin", "t"), dir + "/a/../w.bin");
    EXPECT_EQ(resolve_inside(dir, "./sub/w.bin", "t"), dir + "/./sub/w.bin");
}

TEST(ResolveInside, RefusesAbsolutePaths) {
    const std::string dir = test::make_temp_dir();
    auto [kind, msg] = error_of([&] { resolve_inside(dir, dir + "/w.bin", "tensor 'w'"); });
    EXPECT_EQ(kind, ErrorKind::kInvalidInput);
    EXPECT_NE(msg.find("tensor 'w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("absolute path"), std::string::npos) << msg;
}

TEST(ResolveInside, RefusesClimbingOut) {
    const std::string dir = test::make_temp_dir();
    for (const char* rel : {"..", "../w.bin", "a/../../w.bin", "./../x", "a/b/../../../c"}) {
        auto [kind, msg] = error_of([&] { resolve_inside(dir, rel, "t"); });
        EXPECT_EQ(kind, ErrorKind::kInvalidInput) << rel;
        EXPECT_NE(msg.find("leaves the model's folder"), std::string::npos) << msg;
    }
}

TEST(ResolveInside, RefusesEmptyAndNul) {
    const std::string dir = test::make_temp_dir();
    EXPECT_EQ(error_of([&] { resolve_inside(dir, "", "t"); }).first, ErrorKind::kInvalidInput);
    const std::string nul("a\0b", 3);
    EXPECT_EQ(error_of([&] { resolve_inside(dir, nul, "t"); }).first, ErrorKind::kInvalidInput);
}

TEST(ResolveInside, RefusesSymlinksEscaping) {
    const std::string root = test::make_temp_dir();
    const std::string dir = root + "/model";
    fsys::create_directories(dir);
    write_file_atomic(root + "/secret.bin", "s");
    fsys::create_symlink(root + "/secret.bin", dir + "/abs_link.bin");
    fsys::create_symlink("../secret.bin", dir + "/rel_link.bin");
    fsys::create_directory_symlink("..", dir + "/up");
    for (const char* rel : {"abs_link.bin", "rel_link.bin", "up/secret.bin"}) {
        auto [kind, msg] = error_of([&] { resolve_inside(dir, rel, "t"); });
        EXPECT_EQ(kind, ErrorKind::kInvalidInput) << rel;
        EXPECT_NE(msg.find("outside the model's folder"), std::string::npos) << msg;
    }
}

TEST(ResolveInside, SymlinksStayingInsideAreFine) {
    const std::string root = test::make_temp_dir();
    const std::string dir = root + "/model";
    fsys::create_directories(dir + "/data");
    write_file_atomic(dir + "/data/w.bin", "w");
    fsys::create_symlink("data/w.bin", dir + "/link.bin");
    fsys::create_directory_symlink("data", dir + "/alias");
    EXPECT_EQ(read_file(resolve_inside(dir, "link.bin", "t")), "w");
    EXPECT_EQ(read_file(resolve_inside(dir, "alias/w.bin", "t")), "w");
    fsys::create_directory_symlink("model", root + "/model_link");  // the base is a symlink
    EXPECT_EQ(read_file(resolve_inside(root + "/model_link", "data/w.bin", "t")), "w");
}

TEST(MappedFile, ReadsAWholeFile) {
    const std::string path = test::make_temp_dir() + "/f.bin";
    write_file_atomic(path, std::string("a\0b", 3));
    auto f = MappedFile::open(path);
    ASSERT_EQ(f->size(), 3u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->data()), 3), std::string("a\0b", 3));
    EXPECT_EQ(f->path(), path);
}

TEST(MappedFile, EmptyFileHasSizeZero) {
    const std::string path = test::make_temp_dir() + "/empty.bin";
    write_file_atomic(path, "");
    EXPECT_EQ(MappedFile::open(path)->size(), 0u);
}

TEST(MappedFile, MissingFileIsAnIoError) {
    const std::string path = test::make_temp_dir() + "/missing.bin";
    auto [kind, msg] = error_of([&] { MappedFile::open(path); });
    EXPECT_EQ(kind, ErrorKind::kIo);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
}

TEST(MappedFile, DirectoryIsAnIoError) {
    const std::string dir = test::make_temp_dir();
    auto [kind, msg] = error_of([&] { MappedFile::open(dir); });
    EXPECT_EQ(kind, ErrorKind::kIo);
    EXPECT_NE(msg.find("is a directory"), std::string::npos) << msg;
}

TEST(MappedFile, FifoIsRefusedWithoutWaiting) {
    const std::string path = test::make_temp_dir() + "/pipe";
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    auto [kind, msg] = error_of([&] { MappedFile::open(path); });
    EXPECT_EQ(kind, ErrorKind::kIo);
    EXPECT_NE(msg.find("not a regular file"), std::string::npos) << msg;
}

TEST(MappedFile, DeviceIsRefused) {
    EXPECT_EQ(error_of([] { MappedFile::open("/dev/zero"); }).first, ErrorKind::kIo);
}

TEST(MappedFile, UnreadableFileIsAnIoError) {
    if (::geteuid() == 0) GTEST_SKIP() << "root reads files regardless of their mode";
    const std::string path = test::make_temp_dir() + "/locked.bin";
    write_file_atomic(path, "x");
    ::chmod(path.c_str(), 0);
    auto [kind, msg] = error_of([&] { MappedFile::open(path); });
    EXPECT_EQ(kind, ErrorKind::kIo);
    EXPECT_NE(msg.find("Permission denied"), std::string::npos) << msg;
}

}  // namespace
}  // namespace pg
