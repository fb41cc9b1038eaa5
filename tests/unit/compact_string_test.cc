// CompactString (base/compact_string.h): one pointer, reads like a std::string, and unset equals
// empty in every operation.
#include "base/compact_string.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace pg {
namespace {

const std::string& as_string(const std::string& s) {
    return s;
}

TEST(CompactString, IsOnePointer) {
    EXPECT_EQ(sizeof(CompactString), sizeof(void*));
}

TEST(CompactString, UnsetReadsAsTheEmptyString) {
    CompactString s;
    EXPECT_TRUE(s.empty());
    EXPECT_EQ(s.size(), 0u);
    EXPECT_EQ(s.str(), "");
    EXPECT_STREQ(s.c_str(), "");
    EXPECT_TRUE(s == "");
    EXPECT_TRUE(s == CompactString(std::string()));
    EXPECT_EQ(as_string(s), "");
}

TEST(CompactString, HoldsWhatWasAssigned) {
    CompactString s = std::string("doc");
    EXPECT_FALSE(s.empty());
    EXPECT_EQ(s.size(), 3u);
    EXPECT_EQ(as_string(s), "doc");  // converts to const std::string&
    EXPECT_TRUE(s == "doc");
    EXPECT_TRUE(s == std::string("doc"));
    EXPECT_TRUE(std::string("doc") == s);
    EXPECT_FALSE(s == "do");
    s = "other";
    EXPECT_EQ(s.str(), "other");
    s = std::string();  // assigning "" unsets it
    EXPECT_TRUE(s.empty());
    EXPECT_TRUE(s == CompactString());
}

TEST(CompactString, CopiesAreDeepAndMovesEmptyTheSource) {
    CompactString a = "x";
    CompactString b = a;
    *b.mutable_str() += "y";
    EXPECT_EQ(a.str(), "x");
    EXPECT_EQ(b.str(), "xy");
    a = b;
    EXPECT_EQ(a.str(), "xy");
    CompactString c = std::move(b);
    EXPECT_EQ(c.str(), "xy");
    EXPECT_TRUE(b.empty());  // NOLINT: moved-from is defined here (unset)
    a = a;                   // self-assignment keeps the value
    EXPECT_EQ(a.str(), "xy");
}

TEST(CompactString, AppendsAndConcatenates) {
    CompactString s;
    s += "";
    EXPECT_TRUE(s.empty());
    s += "ab";
    s += std::string("c");
    EXPECT_EQ(s.str(), "abc");
    EXPECT_EQ("<" + s + ">", "<abc>");
    EXPECT_EQ(std::string("[") + s, "[abc");
    EXPECT_EQ(s + std::string("]"), "abc]");
    s.clear();
    EXPECT_TRUE(s.empty());
}

TEST(CompactString, AMutableButEmptyStringStillEqualsUnset) {
    CompactString s;
    s.mutable_str();  // allocated, still empty
    EXPECT_TRUE(s.empty());
    EXPECT_TRUE(s == CompactString());
    EXPECT_EQ(s.size(), 0u);
}

}  // namespace
}  // namespace pg
