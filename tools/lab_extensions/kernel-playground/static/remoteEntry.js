// make lab's JupyterLab extension (tools/lab.py points Lab at this folder): `.cu` and `.cuh` files open in Lab's editor
// as "CUDA C++", highlighted by CodeMirror's C++ mode. Lab picks an editor's language by file extension only, from
// its language registry, and no setting adds one; a plugin can (IEditorLanguageRegistry.addLanguage).
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
    return { __esModule: true, default: plugin };
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
