from racing_demon.cli import main

main(prog_name="racing-demon")
