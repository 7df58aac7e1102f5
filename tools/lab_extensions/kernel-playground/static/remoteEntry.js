// make lab's JupyterLab extension (tools/lab.py points Lab at this folder), two plugins:
//   - `.cu` and `.cuh` files open in Lab's editor as "CUDA C++", highlighted by CodeMirror's C++ mode. Lab picks an
//     editor's language by file extension only, from its language registry, and no setting adds one; a plugin can
//     (IEditorLanguageRegistry.addLanguage).
//   - An edited file open in Lab's editor is saved before a notebook cell runs: the kernel reads the file on disk, and
//     cannot see the editor, so an edit not saved would be tested silently as the old file. Every way Lab runs a
//     cell (Shift+Enter, Run All, the run menu) goes through CodeCell.execute of Lab's own @jupyterlab/cells, looked
//     up at each call: wrapped here, it saves the open, edited documents that are not notebooks, then runs the cell.
//
// Written by hand, so that nothing needs node to build it: a prebuilt ("federated") extension is a webpack container,
// `_JUPYTERLAB[name] = {init(shareScope), get(module)}`, which Lab's bootstrap.js initialises with its shared
// modules and then asks for "./extension" (package.json: jupyterlab._build). The language registry's token is taken
// from Lab's own copy of @jupyterlab/codemirror, through that share scope. tests/test_lab.py opens a .cu file in Lab.
var _JUPYTERLAB;
(function () {
  "use strict";
  let shareScope = {};

  // Lab's own instance of a package it shares (one version per package in a stock Lab: take the newest).
  async function shared(name) {
    const versions = shareScope[name] || {};
    const newest = Object.keys(versions).sort((a, b) => a.localeCompare(b, undefined, { numeric: true })).pop();
    if (!newest) {
      throw new Error(`kernel-playground: JupyterLab shares no ${name}`);
    }
    const factory = await versions[newest].get();
    return factory();
  }

  async function extension() {
    const { IEditorLanguageRegistry } = await shared("@jupyterlab/codemirror");
    const plugin = {
      id: "kernel-playground:cuda-files",
      description: "Opens .cu and .cuh files as CUDA C++, with C++ highlighting.",
      autoStart: true,
      requires: [IEditorLanguageRegistry],
      activate: (app, languages) => {
        const cpp = languages.findByName("C++");
        languages.addLanguage({
          name: "CUDA",
          displayName: "CUDA C++",
          mime: "text/x-cuda",
          extensions: ["cu", "cuh"],
          load: () => cpp.load(),
        });
      },
    };
    const { CodeCell } = await shared("@jupyterlab/cells");
    const saveBeforeRun = {
      id: "kernel-playground:save-before-run",
      description: "Saves the edited files open in Lab's editor (a .cu) before a notebook cell runs.",
      autoStart: true,
      activate: (app) => {
        const execute = CodeCell.execute;
        CodeCell.execute = async function (...args) {
          const edited = Array.from(app.shell.widgets("main")).filter(
            (w) => w.context && w.context.model && w.context.model.dirty && !w.context.path.endsWith(".ipynb"),
          );
          await Promise.all(edited.map((w) => w.context.save()));
          return execute.apply(this, args);
        };
      },
    };
    return { __esModule: true, default: [plugin, saveBeforeRun] };
  }

  _JUPYTERLAB = _JUPYTERLAB === undefined ? {} : _JUPYTERLAB;
  _JUPYTERLAB["kernel-playground"] = {
    init: (scope) => {
      shareScope = scope;
    },
    get: async (module) => {
      if (module !== "./extension") {
        throw new Error(`kernel-playground has no module ${module}`);
      }
      const exports = await extension();
      return () => exports;
    },
  };
})();
