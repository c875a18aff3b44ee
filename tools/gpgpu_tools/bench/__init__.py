"""The benchmark command: `python -m gpgpu_tools.bench [--families ...] [--sizes small|full]`.

Every fast kernel of the lessons, checked against NumPy and timed on the shapes a user brings
(odd sides, primes, widths not a multiple of 4 or 16, RGB images, 1 x N and N x 1, all larger
than the L2 cache), beside the same run's device copy and CuPy; the worst shape of each family
named; a comparison with the GPUs recorded in gpgpu_lessons/recorded/bench/.

Modules: `shapes` (the sweep), `families` (the kernels, their NumPy references and CuPy's
counterparts), `data` (random inputs on the device, where outputs are checked), `run` (check,
time, host costs), `record` (the JSON format, the recorded runs), `report` (tables, summary,
plot, comparison), `progress` (the progress bar).
"""
