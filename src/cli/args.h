// A small argparse-like command-line parser with Polygraphy's conventions: long options may be
// abbreviated to any unambiguous prefix, `--opt=value` and `--opt value` both work, options with
// several values take every following token up to the next option, and help is grouped under
// titled sections. Errors are pg::Error of kind kUsage (exit status 2).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace pg::cli {

enum class Nargs {
    kFlag,        // no value; present or not
    kCount,       // no value; counts occurrences (-v -v)
    kOne,         // exactly one value; a repeat overrides
    kOptionalOne, // zero or one value (present without value = "")
    kOneOrMore,   // one or more values; repeats append
    kZeroOrMore,  // zero or more values; repeats append
};

struct OptionSpec {
    std::vector<std::string> names;  // "-o", "--output"
    std::string dest;
    Nargs nargs = Nargs::kFlag;
    std::string help;
    std::string metavar;
    std::vector<std::string> choices;  // allowed values, if any
    std::string group;
};

struct PositionalSpec {
    std::string dest;
    std::string help;
    bool required = true;
};

class ParsedArgs {
public:
    bool has(const std::string& dest) const { return values_.count(dest) > 0; }
    // The single (last) value of an option, or `fallback` when absent.
    std::string get(const std::string& dest, const std::string& fallback = "") const;
    // Every value given for a multi-valued option (empty when absent).
    std::vector<std::string> get_all(const std::string& dest) const;
    int count(const std::string& dest) const;
    // Tokens after "--" or taken by a REMAINDER-style consumer.
    std::vector<std::string> rest;
    // Every option occurrence's dest, in command-line order (runner flags keep their order).
    std::vector<std::string> sequence;

private:
    friend class ArgParser;
    std::map<std::string, std::vector<std::string>> values_;
    std::map<std::string, int> counts_;
};

class ArgParser {
public:
    ArgParser(std::string prog, std::string description)
        : prog_(std::move(prog)), description_(std::move(description)) {}

    // Starts a titled help section; later options belong to it.
    void group(const std::string& title) { current_group_ = title; }
    void add(OptionSpec spec);
    void flag(std::vector<std::string> names, std::string dest, std::string help);
    void value(std::vector<std::string> names, std::string dest, std::string metavar, std::string help,
               std::vector<std::string> choices = {});
    void values(std::vector<std::string> names, std::string dest, std::string metavar, std::string help,
                Nargs nargs = Nargs::kOneOrMore);
    void positional(std::string dest, std::string help, bool required = true);

    // Parses argv (without the program and tool names). Throws kUsage. A "--help"/"-h" token
    // makes the result contain dest "help".
    ParsedArgs parse(const std::vector<std::string>& argv) const;
    std::string help() const;
    const std::string& prog() const { return prog_; }

private:
    const OptionSpec* find(const std::string& name) const;
    std::string prog_;
    std::string description_;
    std::string current_group_ = "Options";
    std::vector<OptionSpec> options_;
    std::vector<PositionalSpec> positionals_;
};

// True if a token is an option name rather than a value ("-1" and "-.5" are values).
bool looks_like_option(const std::string& token);

}  // namespace pg::cli
