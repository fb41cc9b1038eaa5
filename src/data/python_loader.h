// Polygraphy's data-loader scripts (`--data-loader-script data_loader.py[:load_data]`, and the
// tutorials' `--load-inputs data_loader.py`): a Python file whose function (load_data by default)
// returns or yields feed dicts of numpy arrays. The script runs in a child `python3` that saves
// each feed dict as an .npz in a private temporary folder; the feeds are then read as .npz files
// are (npz.h) and the folder removed. Needs python3 and numpy (python3-numpy; `make setup`
// installs both).
#pragma once

#include <string>

#include "data/polygraphy_json.h"

namespace pg::data {

// "path.py" or "path.py:func" (func defaults to load_data), as Polygraphy splits it.
struct PythonLoaderSpec {
    std::string script;
    std::string function = "load_data";
};
PythonLoaderSpec parse_python_loader(const std::string& arg);

// Whether `arg` names a Python script ("x.py" or "x.py:func").
bool is_python_loader(const std::string& arg);

// The feed dicts the script's function gives, in order. Throws kIo when the script is missing,
// kUnsupported when python3 or numpy is missing (naming the package to install), kInvalidInput
// when the script fails (its Python error in the message) or gives something other than dicts of
// arrays, or no feed dict at all.
FeedList load_python_inputs(const PythonLoaderSpec& spec);

}  // namespace pg::data
