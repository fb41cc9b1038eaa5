#include "cli/args.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"

namespace pg::cli {

namespace {

Error usage(const std::string& prog, const std::string& msg) {
    return Error(ErrorKind::kUsage, prog + ": error: " + msg + "\n(run with --help for usage)");
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
}

std::string wrap(const std::string& text, size_t indent, size_t width) {
    std::string out, line;
    size_t start = 0;
    while (start <= text.size()) {
        size_t nl = text.find('\n', start);
        std::string para = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        size_t pos = 0;
        line.clear();
        while (pos < para.size()) {
            size_t sp = para.find(' ', pos);
            std::string word = para.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
            if (!line.empty() && line.size() + 1 + word.size() > width) {
                out += line + "\n" + std::string(indent, ' ');
                line.clear();
            }
            line += (line.empty() ? "" : " ") + word;
            if (sp == std::string::npos) break;
            pos = sp + 1;
        }
        out += line;
        if (nl == std::string::npos) break;
        out += "\n" + std::string(indent, ' ');
        start = nl + 1;
    }
    return out;
}

}  // namespace

bool looks_like_option(const std::string& t) {
    if (t.size() < 2 || t[0] != '-') return false;
    if (t[1] == '-') return t.size() > 2;
    return !(std::isdigit(static_cast<unsigned char>(t[1])) || t[1] == '.');
}

std::string ParsedArgs::get(const std::string& dest, const std::string& fallback) const {
    auto it = values_.find(dest);
    if (it == values_.end() || it->second.empty()) return fallback;
    return it->second.back();
}

std::vector<std::string> ParsedArgs::get_all(const std::string& dest) const {
    auto it = values_.find(dest);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int ParsedArgs::count(const std::string& dest) const {
    auto it = counts_.find(dest);
    return it == counts_.end() ? 0 : it->second;
}

void ArgParser::add(OptionSpec spec) {
    if (spec.group.empty()) spec.group = current_group_;
    options_.push_back(std::move(spec));
}

void ArgParser::flag(std::vector<std::string> names, std::string dest, std::string help) {
    add({std::move(names), std::move(dest), Nargs::kFlag, std::move(help), "", {}, ""});
}

void ArgParser::value(std::vector<std::string> names, std::string dest, std::string metavar,
                      std::string help, std::vector<std::string> choices) {
    add({std::move(names), std::move(dest), Nargs::kOne, std::move(help), std::move(metavar),
         std::move(choices), ""});
}

void ArgParser::values(std::vector<std::string> names, std::string dest, std::string metavar,
                       std::string help, Nargs nargs) {
    add({std::move(names), std::move(dest), nargs, std::move(help), std::move(metavar), {}, ""});
}

void ArgParser::positional(std::string dest, std::string help, bool required) {
    positionals_.push_back({std::move(dest), std::move(help), required});
}

const OptionSpec* ArgParser::find(const std::string& name) const {
    for (const auto& o : options_)
        if (std::count(o.names.begin(), o.names.end(), name)) return &o;
    if (name.rfind("--", 0) != 0) return nullptr;
    const OptionSpec* match = nullptr;
    std::vector<std::string> candidates;
    for (const auto& o : options_)
        for (const auto& n : o.names)
            if (n.rfind(name, 0) == 0) {
                if (match != &o) candidates.push_back(n);
                match = &o;
            }
    if (candidates.size() > 1)
        throw usage(prog_, "ambiguous option: " + name + " could match " + join(candidates, ", "));
    return match;
}

ParsedArgs ArgParser::parse(const std::vector<std::string>& argv) const {
    ParsedArgs out;
    size_t next_positional = 0;
    for (size_t i = 0; i < argv.size(); ++i) {
        std::string tok = argv[i];
        if (tok == "--") {
            out.rest.assign(argv.begin() + static_cast<long>(i) + 1, argv.end());
            break;
        }
        if (tok == "-h" || tok == "--help") {
            out.values_["help"].push_back("");
            continue;
        }
        if (!looks_like_option(tok)) {
            if (next_positional >= positionals_.size())
                throw usage(prog_, "unrecognized argument: " + tok);
            out.values_[positionals_[next_positional++].dest].push_back(tok);
            continue;
        }
        std::string inline_value;
        bool has_inline = false;
        if (size_t eq = tok.find('='); eq != std::string::npos && tok.rfind("--", 0) == 0) {
            inline_value = tok.substr(eq + 1);
            tok = tok.substr(0, eq);
            has_inline = true;
        }
        const OptionSpec* spec = find(tok);
        if (!spec) throw usage(prog_, "unrecognized option: " + tok);
        auto& vals = out.values_[spec->dest];
        out.sequence.push_back(spec->dest);
        const std::string shown = spec->names.back();
        switch (spec->nargs) {
            case Nargs::kFlag:
            case Nargs::kCount:
                if (has_inline) throw usage(prog_, "option " + shown + " takes no value");
                ++out.counts_[spec->dest];
                break;
            case Nargs::kOne:
            case Nargs::kOptionalOne: {
                if (spec->nargs == Nargs::kOne) vals.clear();
                if (has_inline) vals.push_back(inline_value);
                else if (i + 1 < argv.size() && !looks_like_option(argv[i + 1])) vals.push_back(argv[++i]);
                else if (spec->nargs == Nargs::kOne) throw usage(prog_, "option " + shown + " expects a value");
                else vals.push_back("");
                break;
            }
            case Nargs::kOneOrMore:
            case Nargs::kZeroOrMore: {
                size_t before = vals.size();
                if (has_inline) vals.push_back(inline_value);
                while (i + 1 < argv.size() && !looks_like_option(argv[i + 1]) && argv[i + 1] != "--")
                    vals.push_back(argv[++i]);
                if (spec->nargs == Nargs::kOneOrMore && vals.size() == before)
                    throw usage(prog_, "option " + shown + " expects at least one value");
                break;
            }
        }
        if (!spec->choices.empty())
            for (const auto& v : vals)
                if (!std::count(spec->choices.begin(), spec->choices.end(), v))
                    throw usage(prog_, "option " + shown + ": invalid choice '" + v + "' (choose from " +
                                           join(spec->choices, ", ") + ")");
    }
    if (out.has("help")) return out;
    for (size_t k = next_positional; k < positionals_.size(); ++k)
        if (positionals_[k].required && !out.has(positionals_[k].dest))  // or given as an option
            throw usage(prog_, "the following argument is required: " + positionals_[k].dest);
    return out;
}

std::string ArgParser::help() const {
    std::string usage_line = "usage: " + prog_ + " [-h]";
    for (const auto& p : positionals_) usage_line += p.required ? " " + p.dest : " [" + p.dest + "]";
    usage_line += " [options]";
    std::string out = usage_line + "\n\n" + wrap(description_, 0, 96) + "\n";
    if (!positionals_.empty()) {
        out += "\npositional arguments:\n";
        for (const auto& p : positionals_) {
            std::string left = "  " + p.dest;
            out += left + std::string(left.size() < 30 ? 30 - left.size() : 1, ' ') + wrap(p.help, 30, 66) + "\n";
        }
    }
    std::vector<std::string> groups;
    for (const auto& o : options_)
        if (!std::count(groups.begin(), groups.end(), o.group)) groups.push_back(o.group);
    for (const auto& g : groups) {
        out += "\n" + g + ":\n";
        if (g == groups.front()) out += "  -h, --help                  show this help message and exit\n";
        for (const auto& o : options_) {
            if (o.group != g) continue;
            std::string left = "  " + join(o.names, ", ");
            if (o.nargs == Nargs::kOne) left += " " + o.metavar;
            else if (o.nargs == Nargs::kOptionalOne) left += " [" + o.metavar + "]";
            else if (o.nargs == Nargs::kOneOrMore) left += " " + o.metavar + " [" + o.metavar + " ...]";
            else if (o.nargs == Nargs::kZeroOrMore) left += " [" + o.metavar + " ...]";
            std::string help = o.help;
            if (!o.choices.empty()) help += " Choices: " + join(o.choices, ", ") + ".";
            if (left.size() >= 30) out += left + "\n" + std::string(30, ' ');
            else out += left + std::string(30 - left.size(), ' ');
            out += wrap(help, 30, 66) + "\n";
        }
    }
    return out;
}

}  // namespace pg::cli
