"""An example dpbench plugin: the method :class:`~dpbench_example_plugin.noisy_gd.NoisyGD`, the dataset
preset ``dataset=example_people`` (``data/people.csv``) and the sweep preset ``experiment=example_plugin``."""
