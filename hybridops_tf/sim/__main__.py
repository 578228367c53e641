"""`python -m hybridops_tf.sim`: what the mirror's launcher executes."""

from hybridops_tf.sim.provider import main

if __name__ == "__main__":
    main()
